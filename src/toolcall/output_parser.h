#pragma once
// Streams a chat model's output as OpenAI deltas: reasoning (<think>…</think>), content and
// tool calls. Each push() re-parses everything generated so far with the OutputFormat and
// returns what became certain since the last push, so content never carries markup and a tool
// call's arguments arrive as fragments while they are generated.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "toolcall/output_format.h"

namespace baton::toolcall {

struct ReasoningOptions {
  bool enabled = true;         // false (--reasoning-format none): thinking stays in content
  bool starts_open = false;    // the prompt ended inside a reasoning block (e.g. "<think>\n")
  std::string open = "<think>";
  std::string close = "</think>";
};

struct ToolCallDelta {
  size_t index = 0;       // position of the call in the message
  std::string id;         // set in the first delta of a call only
  std::string name;       // set in the first delta of a call only
  std::string arguments;  // the next fragment of the arguments' JSON text (may be empty)
};

struct OutputDelta {
  std::string reasoning;
  std::string content;
  std::vector<ToolCallDelta> calls;
  bool empty() const { return reasoning.empty() && content.empty() && calls.empty(); }
};

class OutputParser {
 public:
  // `format` null: no tools in this request (or tool_choice "none"), only reasoning is split.
  OutputParser(std::unique_ptr<OutputFormat> format, ReasoningOptions reasoning);
  ~OutputParser();
  // The next piece of generated text.
  OutputDelta push(std::string_view text);
  // Generation ended: everything not yet sent (held-back text, a malformed call as content).
  OutputDelta finish();
  // After finish(): the whole message, calls with their ids (the model's, or "call_…" made up
  // when the format has none). Concatenating every delta gives the same fields.
  const ParsedOutput& result() const { return sent_; }

 private:
  OutputDelta advance(bool final);
  std::unique_ptr<OutputFormat> format_;
  ReasoningOptions reasoning_;
  std::string text_;
  ParsedOutput sent_;
  bool finished_ = false;
};

// A fresh tool-call id: "call_" and 24 random letters and digits.
std::string make_call_id();

// Whether a rendered prompt leaves the model inside a reasoning block (its generation prompt
// ends with the open marker, maybe followed by whitespace), as DeepSeek-R1's and some Qwen3
// templates do.
bool prompt_opens_reasoning(std::string_view prompt, const ReasoningOptions& r);

}  // namespace baton::toolcall
