#pragma once
// The request fields that ask for structured output: response_format, grammar, regex and the
// llama-server and vLLM spellings (json_schema, guided_json, guided_regex, guided_grammar,
// guided_choice), and the Responses API's text.format, read into a ConstraintSpec for
// constraint/constraint_compiler.h.
#include <nlohmann/json.hpp>

#include "constraint/constraint_compiler.h"

namespace baton::server {

// At most one of the fields may be given. Throws ApiError(400) naming the field.
constraint::ConstraintSpec parse_constraint_fields(const nlohmann::json& body);
// The Responses API's spelling: text.format, {"type": "text" | "json_object" | "json_schema",
// "name", "schema", "strict"} with the schema beside the type. Throws ApiError(400).
constraint::ConstraintSpec parse_text_format(const nlohmann::json& body);
// Takes the schema from the body parsed with its key order kept, so that properties are
// generated in the order the client wrote them; every caller of parse_constraint_fields calls
// this with the same body.
void keep_schema_order(constraint::ConstraintSpec& spec, const nlohmann::ordered_json& body);

}  // namespace baton::server
