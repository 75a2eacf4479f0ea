#include "toolcall/registry_a.h"

namespace baton::toolcall {

std::unique_ptr<OutputFormat> make_format_a(std::string_view name, const FormatContext&) {
  if (name == "hermes") return make_hermes_format();
  if (name == "llama3") return make_llama3_format();
  if (name == "firefunction") return make_firefunction_format();
  if (name == "mistral") return make_mistral_format();
  if (name == "deepseek") return make_deepseek_format();
  if (name == "deepseek-v3.2") return make_dsml_format();
  return nullptr;
}

std::vector<std::string> format_names_a() {
  return {"hermes", "llama3", "firefunction", "mistral", "deepseek", "deepseek-v3.2"};
}

// Each family by the markup its template teaches or renders.
std::string detect_format_a(std::string_view source) {
  auto has = [&](std::string_view s) { return source.find(s) != std::string_view::npos; };
  if (has("｜DSML｜")) return "deepseek-v3.2";
  if (has("<｜tool▁call▁begin｜>")) return "deepseek";
  if (has("[TOOL_CALLS]")) return "mistral";
  if (has("functools[")) return "firefunction";
  if (has("<tool_call>")) return "hermes";
  if (has("<|python_tag|>") || (has("<|start_header_id|>") && has("\"parameters\": ")))
    return "llama3";
  return "";
}

}  // namespace baton::toolcall
