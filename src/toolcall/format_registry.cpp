// The one table of tool-call formats: each name with what makes it, in the order
// --tool-call-format lists them, and the cues that detect each family from its chat template.
#include <algorithm>
#include <functional>

#include "toolcall/command_r_format.h"
#include "toolcall/format_factories.h"
#include "toolcall/harmony_format.h"
#include "toolcall/json_args_families.h"
#include "toolcall/kimi_k3_format.h"
#include "toolcall/loose_formats.h"
#include "toolcall/muse_format.h"
#include "toolcall/xml_families.h"

namespace baton::toolcall {
namespace {

using Factory = std::function<std::unique_ptr<OutputFormat>(const FormatContext&)>;

struct FormatEntry {
  std::string_view name;
  Factory make;
};

template <typename F>
Factory plain(F make) {
  return [make](const FormatContext&) { return make(); };
}

template <typename Format>
Factory with_context() {
  return [](const FormatContext& ctx) { return std::make_unique<Format>(ctx); };
}

template <typename Format>
Factory without_context() {
  return [](const FormatContext&) { return std::make_unique<Format>(); };
}

// The formats with a class of their own. The XML families and the JSON-arguments families
// (specs of two shared classes) follow the JSON ones in the listing.
const std::vector<FormatEntry>& json_formats() {
  static const std::vector<FormatEntry> table = {
      {"hermes", plain(make_hermes_format)},
      {"llama3", plain(make_llama3_format)},
      {"firefunction", plain(make_firefunction_format)},
      {"mistral", plain(make_mistral_format)},
      {"deepseek", plain(make_deepseek_format)},
      {"deepseek-v3.2", plain(make_dsml_format)},
      {"minimax-m1", plain(make_minimax_m1_format)},
      {"apriel", make_apriel_format},
      {"apertus", plain(make_apertus_format)},
      {"gigachat3", plain(make_gigachat3_format)},
      {"gigachat3.1", plain(make_gigachat31_format)},
  };
  return table;
}

const std::vector<FormatEntry>& channel_formats() {
  static const std::vector<FormatEntry> table = {
      {"command-r", without_context<CommandRFormat>()},
      {"gpt-oss", without_context<HarmonyFormat>()},
      {"gemma4", without_context<Gemma4Format>()},
      {"lfm2", without_context<PythonicFormat>()},
      {"muse-glimmer", with_context<MuseFormat>()},
      {"kimi-k3", with_context<KimiK3Format>()},
  };
  return table;
}

// A family's cue: every literal occurs in the template.
struct Cue {
  std::string_view format;
  std::vector<std::string_view> all_of;
};

// In order: where one family's markup contains another's, the more specific cue comes first.
// Seed-OSS and Qwen3-Coder both write <function=...>, which alone is Functionary's; a
// "<tool_call>" tag opens Qwen3-Coder's XML calls and is named in Apriel 1.5's instructions,
// and alone means Hermes. Kimi K3 writes every tag through one macro, so its call tag is a
// quoted tag name.
const std::vector<Cue>& cues() {
  static const std::vector<Cue> table = {
      {"kimi-k3", {"'<|open|>'", "open_tag('call'"}},
      {"minimax-m3", {"]<]minimax[>["}},
      {"minimax", {"<minimax:tool_call>"}},
      {"seed-oss", {"<seed:tool_call>"}},
      {"hy3", {"<tool_sep", ":opensource"}},
      {"kimi-k2", {"<|tool_calls_section_begin|>"}},
      {"solar-open", {"<|tool_call:begin|>"}},
      {"command-r", {"<|START_ACTION|>"}},
      {"command-r", {"Action:", "\"tool_name\""}},
      {"muse-glimmer", {"<atem:function_calls>"}},
      {"gpt-oss", {"<|channel|>", "<|message|>"}},
      {"gemma4", {"<|tool_call>call:"}},
      {"lfm2", {"<|tool_call_start|>"}},
      {"minicpm5", {"<function name=\"", "<param name=\""}},
      {"glm", {"<arg_key>"}},
      {"qwen3-coder", {"<parameter="}},
      {"functionary", {"<function="}},
      {"apertus", {"<|tools_prefix|>"}},
      {"gigachat3.1", {"<|function_call|>", "<|role_sep|>"}},
      {"gigachat3", {"function call", "<|role_sep|>"}},
      {"apriel", {"[BEGIN FINAL RESPONSE]", "<tool_calls>["}},
      {"minimax-m1", {"<beginning_of_sentence>", "<tool_calls>"}},
      {"deepseek-v3.2", {"｜DSML｜"}},
      {"deepseek", {"<｜tool▁call▁begin｜>"}},
      {"mistral", {"[TOOL_CALLS]"}},
      {"firefunction", {"functools["}},
      {"hermes", {"<tool_call>"}},
      {"llama3", {"<|python_tag|>"}},
      {"llama3", {"<|start_header_id|>", "\"parameters\": "}},
  };
  return table;
}

const FormatEntry* find_entry(const std::vector<FormatEntry>& table, std::string_view name) {
  for (const FormatEntry& e : table) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

}  // namespace

std::unique_ptr<OutputFormat> make_format(std::string_view name, const FormatContext& ctx) {
  if (const FormatEntry* e = find_entry(json_formats(), name)) return e->make(ctx);
  if (auto spec = xml_family_spec(name)) return std::make_unique<XmlCallFormat>(*spec, ctx);
  if (auto spec = json_args_family_spec(name)) return std::make_unique<JsonArgsFormat>(*spec);
  if (const FormatEntry* e = find_entry(channel_formats(), name)) return e->make(ctx);
  return nullptr;
}

std::vector<std::string> format_names() {
  std::vector<std::string> names;
  for (const FormatEntry& e : json_formats()) names.emplace_back(e.name);
  for (auto& n : xml_family_names()) names.push_back(std::move(n));
  for (auto& n : json_args_family_names()) names.push_back(std::move(n));
  for (const FormatEntry& e : channel_formats()) names.emplace_back(e.name);
  return names;
}

std::string detect_format(std::string_view source) {
  auto has = [&](std::string_view s) { return source.find(s) != std::string_view::npos; };
  for (const Cue& cue : cues()) {
    if (std::all_of(cue.all_of.begin(), cue.all_of.end(), has)) return std::string(cue.format);
  }
  return "hermes";
}

}  // namespace baton::toolcall
