#include "toolcall/json_args_families.h"

#include "toolcall/markup_text.h"

// GCC 12 reports a -Wrestrict overlap inside std::string's inlined copy when these specs assign
// string lists (GCC bug 105329, a false positive fixed in GCC 13); nothing here aliases.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace baton::toolcall {

namespace {

// Kimi K2's id "functions.NAME:IDX" names the function; the whole id is the call's id.
bool read_kimi_header(std::string_view header, ToolCall& call) {
  std::string_view name = header;
  if (name.substr(0, 10) == "functions.") name.remove_prefix(10);
  if (auto colon = name.rfind(':'); colon != std::string_view::npos) name = name.substr(0, colon);
  if (!read_name_header(name, call)) return false;
  call.id = header;
  return true;
}

// Kimi K2 (and K2 Thinking):
//   <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>
//   {...}<|tool_call_end|>...<|tool_calls_section_end|>
JsonArgsSpec kimi_k2() {
  JsonArgsSpec s;
  s.name = "kimi-k2";
  s.section_open = {"<|tool_calls_section_begin|>"};
  s.section_close = {"<|tool_calls_section_end|>"};
  s.call_open = {"<|tool_call_begin|>"};
  s.header_end = "<|tool_call_argument_begin|>";
  s.read_header = read_kimi_header;
  s.call_close = {"<|tool_call_end|>"};
  s.header_gbnf = R"("functions." NAME ":" [0-9])";
  s.markers = {"<|tool_calls_section_begin|>", "<|tool_calls_section_end|>", "<|tool_call_begin|>",
               "<|tool_call_argument_begin|>", "<|tool_call_end|>"};
  return s;
}

// Functionary v3.1 (Llama 3.1 based): <function=NAME>{...}</function>
JsonArgsSpec functionary() {
  JsonArgsSpec s;
  s.name = "functionary";
  s.call_open = {"<function="};
  s.header_end = ">";
  s.read_header = read_name_header;
  s.call_close = {"</function>"};
  s.header_gbnf = "NAME";
  return s;
}

// Solar Open: <|tool_calls|><|tool_call:begin|>ID<|tool_call:name|>NAME<|tool_call:args|>{...}
// <|tool_call:end|>...<|calls|>
bool read_solar_header(std::string_view header, ToolCall& call) {
  constexpr std::string_view sep = "<|tool_call:name|>";
  auto at = header.find(sep);
  if (at == std::string_view::npos) return false;
  std::string_view id = markup::trim(header.substr(0, at));
  if (!read_name_header(markup::trim(header.substr(at + sep.size())), call)) return false;
  call.id = id;
  return true;
}

JsonArgsSpec solar_open() {
  JsonArgsSpec s;
  s.name = "solar-open";
  s.section_open = {"<|tool_calls|>"};
  s.section_close = {"<|calls|>"};
  s.call_open = {"<|tool_call:begin|>"};
  s.header_end = "<|tool_call:args|>";
  s.read_header = read_solar_header;
  s.call_close = {"<|tool_call:end|>"};
  s.header_gbnf = R"([a-zA-Z0-9]{8} "<|tool_call:name|>" NAME)";
  s.markers = {"<|tool_calls|>",     "<|calls|>",          "<|tool_call:begin|>",
               "<|tool_call:name|>", "<|tool_call:args|>", "<|tool_call:end|>"};
  return s;
}

}  // namespace

std::optional<JsonArgsSpec> json_args_family_spec(std::string_view name) {
  for (auto make : {kimi_k2, functionary, solar_open}) {
    JsonArgsSpec s = make();
    if (s.name == name) return s;
  }
  return std::nullopt;
}

std::vector<std::string> json_args_family_names() {
  return {"kimi-k2", "functionary", "solar-open"};
}

}  // namespace baton::toolcall
