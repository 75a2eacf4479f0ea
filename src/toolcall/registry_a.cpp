#include "toolcall/registry_a.h"

namespace baton::toolcall {

std::unique_ptr<OutputFormat> make_format_a(std::string_view name, const FormatContext& ctx) {
  if (name == "hermes") return make_hermes_format();
  if (name == "llama3") return make_llama3_format();
  if (name == "firefunction") return make_firefunction_format();
  if (name == "mistral") return make_mistral_format();
  if (name == "deepseek") return make_deepseek_format();
  if (name == "deepseek-v3.2") return make_dsml_format();
  if (name == "minimax-m1") return make_minimax_m1_format();
  if (name == "apriel") return make_apriel_format(ctx);
  if (name == "apertus") return make_apertus_format();
  if (name == "gigachat3") return make_gigachat3_format();
  if (name == "gigachat3.1") return make_gigachat31_format();
  return nullptr;
}

std::vector<std::string> format_names_a() {
  return {"hermes",     "llama3", "firefunction", "mistral",   "deepseek",   "deepseek-v3.2",
          "minimax-m1", "apriel", "apertus",      "gigachat3", "gigachat3.1"};
}

// Each family by the markup its template teaches or renders. The section families come first:
// Apriel 1.5's instructions also name a <tool_call> tag, which alone would mean Hermes.
std::string detect_format_a(std::string_view source) {
  auto has = [&](std::string_view s) { return source.find(s) != std::string_view::npos; };
  if (has("<|tools_prefix|>")) return "apertus";
  if (has("<|function_call|>") && has("<|role_sep|>")) return "gigachat3.1";
  if (has("function call") && has("<|role_sep|>")) return "gigachat3";
  if (has("[BEGIN FINAL RESPONSE]") && has("<tool_calls>[")) return "apriel";
  if (has("<beginning_of_sentence>") && has("<tool_calls>")) return "minimax-m1";
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
