#include "toolcall/registry_b.h"

#include "toolcall/format_command_r.h"
#include "toolcall/format_harmony.h"
#include "toolcall/format_kimi_k3.h"
#include "toolcall/format_muse.h"
#include "toolcall/json_args_families.h"
#include "toolcall/loose_formats.h"
#include "toolcall/xml_families.h"

namespace baton::toolcall {

std::unique_ptr<OutputFormat> make_format_b(std::string_view name, const FormatContext& ctx) {
  if (auto spec = xml_family_spec(name)) return std::make_unique<XmlCallFormat>(*spec, ctx);
  if (auto spec = json_args_family_spec(name)) return std::make_unique<JsonArgsFormat>(*spec);
  if (name == "command-r") return std::make_unique<CommandRFormat>();
  if (name == "gpt-oss") return std::make_unique<HarmonyFormat>();
  if (name == "gemma4") return std::make_unique<Gemma4Format>();
  if (name == "lfm2") return std::make_unique<PythonicFormat>();
  if (name == "muse-glimmer") return std::make_unique<MuseFormat>(ctx);
  if (name == "kimi-k3") return std::make_unique<KimiK3Format>(ctx);
  return nullptr;
}

std::vector<std::string> format_names_b() {
  std::vector<std::string> names = xml_family_names();
  for (auto& n : json_args_family_names()) names.push_back(n);
  names.push_back("command-r");
  names.push_back("gpt-oss");
  names.push_back("gemma4");
  names.push_back("lfm2");
  names.push_back("muse-glimmer");
  names.push_back("kimi-k3");
  return names;
}

namespace {

bool has(std::string_view source, std::string_view literal) {
  return source.find(literal) != std::string_view::npos;
}

}  // namespace

// Each family is recognised by the markup its template writes for an assistant's calls. Order
// matters where one family's markup contains another's: Seed-OSS and Qwen3-Coder both write
// <function=...>, which alone is Functionary's.
std::string detect_format_b(std::string_view source) {
  // Kimi K3 writes every tag through one macro, so its call tag is a quoted tag name.
  if (has(source, "'<|open|>'") && has(source, "open_tag('call'")) return "kimi-k3";
  if (has(source, "]<]minimax[>[")) return "minimax-m3";
  if (has(source, "<minimax:tool_call>")) return "minimax";
  if (has(source, "<seed:tool_call>")) return "seed-oss";
  if (has(source, "<tool_sep") && has(source, ":opensource")) return "hy3";
  if (has(source, "<|tool_calls_section_begin|>")) return "kimi-k2";
  if (has(source, "<|tool_call:begin|>")) return "solar-open";
  if (has(source, "<|START_ACTION|>") || (has(source, "Action:") && has(source, "\"tool_name\"")))
    return "command-r";
  if (has(source, "<atem:function_calls>")) return "muse-glimmer";
  if (has(source, "<|channel|>") && has(source, "<|message|>")) return "gpt-oss";
  if (has(source, "<|tool_call>call:")) return "gemma4";
  if (has(source, "<|tool_call_start|>")) return "lfm2";
  if (has(source, "<function name=\"") && has(source, "<param name=\"")) return "minicpm5";
  if (has(source, "<arg_key>")) return "glm";
  if (has(source, "<parameter=")) return "qwen3-coder";
  if (has(source, "<function=")) return "functionary";
  return "";
}

}  // namespace baton::toolcall
