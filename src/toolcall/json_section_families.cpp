// The families JsonSectionFormat reads, one spec each, and their factories.
#include "toolcall/format_factories.h"
#include "toolcall/json_section_format.h"

// GCC 12 reports a -Wrestrict overlap inside std::string's inlined copy when these specs assign
// strings (GCC bug 105329, a false positive fixed in GCC 13); nothing here aliases.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ == 12
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace baton::toolcall {

// MiniMax-M1: <tool_calls>\n{"name": "f", "arguments": {...}}\n...\n</tool_calls>. Its
// reasoning is a <think> block, which the streaming layer splits.
JsonSectionSpec minimax_m1_spec() {
  JsonSectionSpec s;
  s.name = "minimax-m1";
  s.open = "<tool_calls>";
  s.close = "</tool_calls>";
  s.body = CallBody::lines;
  s.markers = {s.open, s.close};
  s.grammar_break = "\n";
  return s;
}

// Apertus: <|inner_prefix|>thoughts<|inner_suffix|> then
// <|tools_prefix|>[{"f": {...}}, ...]<|tools_suffix|>.
JsonSectionSpec apertus_spec() {
  JsonSectionSpec s;
  s.name = "apertus";
  s.open = "<|tools_prefix|>";
  s.close = "<|tools_suffix|>";
  s.body = CallBody::named_array;
  s.think_open = "<|inner_prefix|>";
  s.think_close = "<|inner_suffix|>";
  s.markers = {s.open, s.close, s.think_open, s.think_close};
  return s;
}

// GigaChat 3 writes its call as the next turn of the dialog, a "function call" role:
//   content<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "f", "arguments": {...}}
// The turn separator between them (and after the call) is layout.
JsonSectionSpec gigachat3_spec() {
  JsonSectionSpec s;
  s.name = "gigachat3";
  s.open = "function call<|role_sep|>";
  s.body = CallBody::single;
  s.separators = {"<|message_sep|>"};
  s.markers = {"<|message_sep|>", "<|role_sep|>"};
  s.grammar_lead = "<|message_sep|>\n\n";
  s.grammar_break = "\n";
  return s;
}

// GigaChat 3.1: content<|function_call|>{"name": "f", "arguments": {...}}<|message_sep|>
JsonSectionSpec gigachat31_spec() {
  JsonSectionSpec s;
  s.name = "gigachat3.1";
  s.open = "<|function_call|>";
  s.body = CallBody::single;
  s.separators = {"<|message_sep|>"};
  s.markers = {s.open, "<|message_sep|>"};
  return s;
}

// Apriel 1.5 / 1.6: content then <tool_calls>[{"name": "f", "arguments": {...}}, ...]
// </tool_calls>; the template adds "id" to calls of earlier turns, which is ignored. The final
// response's markers, where they follow the reasoning, are layout.
JsonSectionSpec apriel_calls_spec() {
  JsonSectionSpec s;
  s.name = "apriel";
  s.open = "<tool_calls>";
  s.close = "</tool_calls>";
  s.body = CallBody::array;
  s.separators = {"[BEGIN FINAL RESPONSE]", "[END FINAL RESPONSE]"};
  s.markers = {s.open, s.close, "[BEGIN FINAL RESPONSE]", "[END FINAL RESPONSE]"};
  return s;
}

std::unique_ptr<OutputFormat> make_minimax_m1_format() {
  return std::make_unique<JsonSectionFormat>(minimax_m1_spec());
}

std::unique_ptr<OutputFormat> make_apertus_format() {
  return std::make_unique<JsonSectionFormat>(apertus_spec());
}

std::unique_ptr<OutputFormat> make_gigachat3_format() {
  return std::make_unique<JsonSectionFormat>(gigachat3_spec());
}

std::unique_ptr<OutputFormat> make_gigachat31_format() {
  return std::make_unique<JsonSectionFormat>(gigachat31_spec());
}

}  // namespace baton::toolcall
