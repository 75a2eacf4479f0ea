#pragma once
// One engine for the families that write their calls as JSON call objects inside an open…close
// section, content around it:
//   MiniMax-M1    <tool_calls>\n{"name": "f", "arguments": {...}}\n...</tool_calls>
//   Apriel        <tool_calls>[{"name": "f", "arguments": {...}}, ...]</tool_calls>
//   Apertus       <|tools_prefix|>[{"f": {...}}, ...]<|tools_suffix|>
//   GigaChat 3    <|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "f", "arguments": {...}}
//   GigaChat 3.1  <|function_call|>{"name": "f", "arguments": {...}}
// Arguments stream as the model's own JSON text; calls appear once their name is complete.
#include <string>
#include <string_view>
#include <vector>

#include "toolcall/output_format.h"

namespace baton::toolcall {

// How the calls stand between the section's markers.
enum class CallBody {
  lines,        // call objects one after another (one a line)
  array,        // a JSON array of call objects
  named_array,  // a JSON array of {"NAME": {arguments}} objects
  single,       // one call object
};

struct JsonSectionSpec {
  std::string name;
  std::string open;
  std::string close;  // "" when nothing closes the section
  CallBody body = CallBody::single;
  // Turn separators the model may write around its calls: layout, dropped wherever they stand.
  std::vector<std::string> separators;
  // A leading reasoning block ("" when the family has none).
  std::string think_open, think_close;
  std::vector<std::string> markers;
  // What a forced call writes before `open` (GigaChat 3's turn separator), and between the
  // section's pieces where its template puts line breaks.
  std::string grammar_lead;
  std::string grammar_break;
};

class JsonSectionFormat : public OutputFormat {
 public:
  explicit JsonSectionFormat(JsonSectionSpec spec) : spec_(std::move(spec)) {}
  std::string_view name() const override { return spec_.name; }
  ParsedOutput parse(std::string_view text, bool final) const override;
  std::vector<std::string> markers() const override { return spec_.markers; }
  // The section's open; none when a call starts with a turn separator that also ends turns.
  std::string call_trigger() const override { return spec_.grammar_lead.empty() ? spec_.open : ""; }
  std::string call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const override;

 private:
  JsonSectionSpec spec_;
};

// The families' specs and formats (json_section_families.cpp).
JsonSectionSpec minimax_m1_spec();
JsonSectionSpec apertus_spec();
JsonSectionSpec gigachat3_spec();
JsonSectionSpec gigachat31_spec();
// Apriel's calls (its reasoning is split by make_apriel_format's wrapper).
JsonSectionSpec apriel_calls_spec();

}  // namespace baton::toolcall
