#pragma once
// The request fields that ask for structured output: response_format, grammar, regex and the
// llama-server and vLLM spellings (json_schema, guided_json, guided_regex, guided_grammar,
// guided_choice), and the Responses API's text.format, read into a ConstraintSpec for
// constraint/constraint_compiler.h.
#include "constraint/constraint_compiler.h"
#include "server/api/json_fields.h"

namespace baton::server {

// At most one of the fields may be given. Throws ApiError(400) naming the field.
constraint::ConstraintSpec parse_constraint_fields(const RequestJson& body);
// The Responses API's spelling: text.format, {"type": "text" | "json_object" | "json_schema",
// "name", "schema", "strict"} with the schema beside the type. Throws ApiError(400).
constraint::ConstraintSpec parse_text_format(const RequestJson& body);

}  // namespace baton::server
