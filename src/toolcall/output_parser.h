#pragma once
// Streams a chat model's output as OpenAI deltas: reasoning (<think>…</think>), content and
// tool calls. Each push() re-parses everything generated so far with the OutputFormat and
// returns what became certain since the last push, so content never carries markup and a tool
// call's arguments arrive as fragments while they are generated.
//
// Rules:
//  - Reasoning: with `enabled`, a leading open…close block (leading whitespace allowed), or
//    with `starts_open` the text up to close, is reasoning; whitespace at its edges and right
//    after the close marker is dropped (as transformers-style reasoning parsers strip it). An
//    unclosed block is reasoning to the end. The format parses the rest.
//  - Deltas never end inside a UTF-8 sequence (its bytes wait for the next push).
//  - finish() never takes back what was sent. If the final parse contradicts a streamed call
//    (generation was cut inside it, or it turned out malformed), the call stays as streamed
//    and the final content not yet sent (which then holds the call's raw text) follows as
//    content. Non-streamed responses should use parse_complete(), which has no such history.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "toolcall/output_format.h"

namespace baton::toolcall {

struct ReasoningOptions {
  bool enabled = true;       // false (--reasoning-format none): thinking stays in content
  bool starts_open = false;  // the prompt ended inside a reasoning block (e.g. "<think>\n")
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
  // For a response that is not streamed: the final parse of the whole text at once, ids made
  // up where the format has none. Unlike push() + finish(), a call that turns out malformed is
  // only content here, never a call.
  ParsedOutput parse_complete(std::string_view text) const;

 private:
  ParsedOutput parse_text(std::string_view text, bool final) const;
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
