#include "toolcall/param_schema.h"

#include "toolcall/markup_text.h"
#include "util/json_depth.h"

namespace baton::toolcall {

namespace {

// A schema's type as a kind: "string" (alone or with "null") is text, other types are JSON.
ParamKind kind_of(const nlohmann::ordered_json& schema) {
  if (!schema.is_object() || !schema.contains("type")) return ParamKind::unknown;
  const auto& t = schema["type"];
  if (t.is_string()) return t.get<std::string>() == "string" ? ParamKind::string : ParamKind::json;
  if (!t.is_array()) return ParamKind::unknown;
  bool text = false, other = false;
  for (const auto& e : t) {
    if (!e.is_string() || e == "null") continue;
    (e == "string" ? text : other) = true;
  }
  return text && !other ? ParamKind::string : other && !text ? ParamKind::json : ParamKind::unknown;
}

}  // namespace

ParamSchemas::ParamSchemas(const nlohmann::ordered_json& tools) {
  if (!tools.is_array()) return;
  for (const auto& tool : tools) {
    const auto& fn = tool.is_object() && tool.contains("function") ? tool["function"] : tool;
    if (!fn.is_object() || !fn.contains("name") || !fn["name"].is_string()) continue;
    auto& params = kinds_[fn["name"].get<std::string>()];
    if (!fn.contains("parameters") || !fn["parameters"].is_object()) continue;
    const auto& props = fn["parameters"].value("properties", nlohmann::ordered_json::object());
    if (!props.is_object()) continue;
    for (const auto& [key, schema] : props.items()) params[key] = kind_of(schema);
  }
}

ParamKind ParamSchemas::kind(std::string_view tool, std::string_view param) const {
  auto t = kinds_.find(tool);
  if (t == kinds_.end()) return ParamKind::unknown;
  auto p = t->second.find(param);
  return p == t->second.end() ? ParamKind::unknown : p->second;
}

std::string param_json(std::string_view raw, ParamKind kind) {
  if (kind != ParamKind::string) {
    std::string_view v = markup::trim(raw);
    auto parsed = util::parse_json_bounded<nlohmann::ordered_json>(v);
    bool structured = parsed.is_object() || parsed.is_array();
    if (!parsed.is_discarded() && (kind == ParamKind::json || structured))
      return parsed.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
    // Templates that print arguments with Python's str() write booleans and None this way.
    if (kind == ParamKind::json) {
      if (v == "True") return "true";
      if (v == "False") return "false";
      if (v == "None") return "null";
    }
  }
  return markup::json_quote(raw);
}

}  // namespace baton::toolcall
