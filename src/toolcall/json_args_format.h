#pragma once
// One engine for the families that write a call as markup around a header (the function name,
// maybe an id) followed by the arguments as a JSON object: Kimi K2's
// <|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{...}<|tool_call_end|>,
// Functionary's <function=NAME>{...}</function>, Solar Open's <|tool_call:begin|>... The
// arguments stream as the model's own JSON text.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "toolcall/output_format.h"

namespace baton::toolcall {

struct JsonArgsSpec {
  std::string name;
  std::vector<std::string> section_open, section_close;  // empty when calls stand alone
  std::vector<std::string> call_open;
  std::string header_end;  // ends the header, then the arguments' object starts
  // Reads the header (whitespace trimmed) into the call's name and id; false when it is not one.
  std::function<bool(std::string_view header, ToolCall& call)> read_header;
  std::vector<std::string> call_close;  // pieces after the first may be missing at the end
  std::vector<std::string> markers;
  // The header in GBNF for a forced call, with NAME standing for the tool name's literal;
  // empty: no call grammar.
  std::string header_gbnf;
};

class JsonArgsFormat : public OutputFormat {
 public:
  explicit JsonArgsFormat(JsonArgsSpec spec) : spec_(std::move(spec)) {}
  std::string_view name() const override { return spec_.name; }
  ParsedOutput parse(std::string_view text, bool final) const override;
  std::vector<std::string> markers() const override { return spec_.markers; }
  std::string call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const override;
  std::string call_trigger() const override {
    if (spec_.header_gbnf.empty()) return "";
    return spec_.section_open.empty() ? spec_.call_open.front() : spec_.section_open.front();
  }

 private:
  JsonArgsSpec spec_;
};

// A header that is only the function name (no spaces, quotes or markup in it).
bool read_name_header(std::string_view header, ToolCall& call);

}  // namespace baton::toolcall
