#include "server/api/constraint_fields.h"

#include <fmt/format.h>

#include "server/api/json_fields.h"
#include "server/errors.h"

namespace baton::server {

using constraint::ConstraintSpec;
using json = RequestJson;  // the request document

namespace {

void set_once(ConstraintSpec& spec, ConstraintSpec::Kind kind, const std::string& field) {
  if (spec.active()) {
    throw bad_request(
        fmt::format("'{}' and '{}' both constrain the output; send only one", spec.field, field),
        field);
  }
  spec.kind = kind;
  spec.field = field;
}

// The JSON Schema that `holder` carries under "schema" (response_format's json_schema object, or
// the Responses API's text.format), read as a JsonSchema constraint of `field`. `where` is the
// holder's path for messages ("response_format.json_schema").
// `allow_inline`: a holder without "schema" that looks like a schema is the schema itself.
void parse_schema_holder(const json& holder, const std::string& field, const std::string& where,
                         bool allow_inline, ConstraintSpec& spec) {
  auto schema = holder.find("schema");
  const bool inline_schema = schema == holder.end();
  if (inline_schema) {
    // Some clients put the schema itself at this level (llama-server accepts both).
    const bool looks_like_schema =
        holder.contains("type") || holder.contains("properties") || holder.contains("$ref");
    if (!allow_inline || !looks_like_schema) {
      throw bad_request(fmt::format("'{}.schema' is required", where), field);
    }
  }
  const json& s = inline_schema ? holder : *schema;
  if (!s.is_object() && !s.is_boolean()) {
    throw bad_request(fmt::format("'{}.schema' must be a JSON Schema object", where), field);
  }
  set_once(spec, ConstraintSpec::Kind::JsonSchema, field);
  spec.schema = s;
}

void parse_response_format(const json& rf, ConstraintSpec& spec) {
  if (!rf.is_object()) throw bad_request("'response_format' must be an object", "response_format");
  const json type = rf.value("type", json());
  if (type == "text") return;
  if (type == "json_object") {
    set_once(spec, ConstraintSpec::Kind::JsonObject, "response_format");
    return;
  }
  if (type != "json_schema") {
    throw bad_request("'response_format.type' must be \"text\", \"json_object\" or \"json_schema\"",
                      "response_format");
  }
  auto js = rf.find("json_schema");
  if (js == rf.end() || !js->is_object()) {
    throw bad_request("'response_format.json_schema' must be an object with 'name' and 'schema'",
                      "response_format");
  }
  parse_schema_holder(*js, "response_format", "response_format.json_schema", true, spec);
}

void parse_text_field(const json& body, const char* key, ConstraintSpec::Kind kind,
                      ConstraintSpec& spec) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return;
  if (!it->is_string() || it->get_ref<const std::string&>().empty()) {
    throw bad_request(fmt::format("'{}' must be a non-empty string", key), key);
  }
  set_once(spec, kind, key);
  spec.text = it->get<std::string>();
}

void parse_schema_field(const json& body, const char* key, ConstraintSpec& spec) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return;
  if (!it->is_object() && !it->is_boolean()) {
    throw bad_request(fmt::format("'{}' must be a JSON Schema object", key), key);
  }
  set_once(spec, ConstraintSpec::Kind::JsonSchema, key);
  spec.schema = *it;
}

void parse_choice_field(const json& body, ConstraintSpec& spec) {
  auto it = body.find("guided_choice");
  if (it == body.end() || it->is_null()) return;
  if (!it->is_array() || it->empty()) {
    throw bad_request("'guided_choice' must be a non-empty array of strings", "guided_choice");
  }
  set_once(spec, ConstraintSpec::Kind::Choice, "guided_choice");
  for (const auto& c : *it) {
    if (!c.is_string() || c.get_ref<const std::string&>().empty()) {
      throw bad_request("'guided_choice' entries must be non-empty strings", "guided_choice");
    }
    spec.choices.push_back(c.get<std::string>());
  }
}

}  // namespace

ConstraintSpec parse_text_format(const json& body) {
  ConstraintSpec spec;
  auto text = body.find("text");
  if (text == body.end() || text->is_null()) return spec;
  if (!text->is_object()) throw bad_request("'text' must be an object", "text");
  auto format = text->find("format");
  if (format == text->end() || format->is_null()) return spec;
  if (!format->is_object()) {
    throw bad_request("'text.format' must be an object with a 'type'", "text.format");
  }
  const json type = format->value("type", json());
  if (type == "text") return spec;
  if (type == "json_object") {
    set_once(spec, ConstraintSpec::Kind::JsonObject, "text.format");
    return spec;
  }
  if (type != "json_schema") {
    throw bad_request("'text.format.type' must be \"text\", \"json_object\" or \"json_schema\"",
                      "text.format");
  }
  parse_schema_holder(*format, "text.format", "text.format", false, spec);
  return spec;
}

ConstraintSpec parse_constraint_fields(const json& body) {
  ConstraintSpec spec;
  if (auto it = body.find("response_format"); it != body.end() && !it->is_null()) {
    parse_response_format(*it, spec);
  }
  parse_schema_field(body, "json_schema", spec);
  parse_schema_field(body, "guided_json", spec);
  parse_text_field(body, "grammar", ConstraintSpec::Kind::Grammar, spec);
  parse_text_field(body, "guided_grammar", ConstraintSpec::Kind::Grammar, spec);
  parse_text_field(body, "regex", ConstraintSpec::Kind::Regex, spec);
  parse_text_field(body, "guided_regex", ConstraintSpec::Kind::Regex, spec);
  parse_choice_field(body, spec);
  return spec;
}

}  // namespace baton::server
