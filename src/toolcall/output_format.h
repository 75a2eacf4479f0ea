#pragma once
// What a chat model's generated text means: reasoning, content and tool calls, in the markup of
// the model's own family (Hermes <tool_call> JSON, Llama 3 JSON, Mistral [TOOL_CALLS], ...).
//
// A format is a pure function of the whole text generated so far (parse()); the streaming layer
// (output_parser.h) re-parses as text arrives and sends the difference, so a format never keeps
// state and every format is tested the same way: whole, and in every split into pieces.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "toolcall/call_grammar.h"

namespace baton::toolcall {

struct ToolCall {
  std::string id;  // the model's own id where its format has one, else empty
  std::string name;
  std::string arguments;  // JSON text of an object, e.g. {"path": "a.txt"}
};

struct ParsedOutput {
  std::string reasoning;
  std::string content;
  std::vector<ToolCall> calls;
  // When parse() is not final: whether the last call's arguments are complete. Ignored when
  // `calls` is empty or when final.
  bool last_call_open = false;
};

// What a format needs to know about the request.
struct FormatContext {
  nlohmann::ordered_json tools = nlohmann::ordered_json::array();  // the request's `tools`
  // The end of the rendered prompt: formats whose templates open a channel for the answer
  // (Kimi K3's think or response) read from it where the model starts.
  std::string prompt_tail;
};

class OutputFormat {
 public:
  virtual ~OutputFormat() = default;
  // The name --tool-call-format takes ("hermes", "llama3", "mistral", ...).
  virtual std::string_view name() const = 0;
  // Parses the whole generated text.
  //  - final = false (streaming, more text may follow): returns only what more text cannot
  //    change. Content and reasoning stop before anything that could still be the start of
  //    markup (a partial "<tool_c"); a call appears once its name is complete; the last call's
  //    arguments are a prefix of their final JSON text (last_call_open = true while open).
  //    Every later parse() extends each field of an earlier one: content, reasoning and each
  //    call's arguments only grow at their end, calls are only appended.
  //  - final = true (generation ended): everything. A call that is malformed (bad JSON, no
  //    end marker where the format needs one) is returned as content, raw, never dropped.
  // Markup never appears in content or reasoning.
  virtual ParsedOutput parse(std::string_view text, bool final) const = 0;
  // Texts of the special tokens this format's markup uses (e.g. "[TOOL_CALLS]",
  // "<|python_tag|>"): the detokenizer must show them for parse() to see them.
  virtual std::vector<std::string> markers() const = 0;
  // Whether every answer, with tools or without, is written in this format's channels (harmony,
  // Kimi K3, muse): then the server parses answers to requests without tools too.
  virtual bool answers_in_channels() const { return false; }
  // The GBNF body of a forced answer: one call (or, when req.parallel, one or more) in this
  // format's markup, to one of req.tools, with arguments valid for its parameters; rules go to
  // the sink. "" when the format has no call grammar (the call is then asked for, not enforced).
  // The text that opens a call ("<tool_call>"), where call_grammar() starts: with tool_choice
  // "auto" the grammar holds from there. "" when a call cannot be told from prose by a prefix.
  virtual std::string call_trigger() const { return ""; }
  virtual std::string call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const {
    (void)req;
    (void)sink;
    return "";
  }
};

// Builds the named format; nullptr when the name is unknown.
std::unique_ptr<OutputFormat> make_format(std::string_view name, const FormatContext& ctx);
// Every name make_format() accepts, for --tool-call-format's help and error message.
std::vector<std::string> format_names();
// The format a chat template's tool-call markup belongs to, from its source text ("hermes" for
// a template that renders <tool_call> JSON, ...); "hermes" when nothing matches, since that is
// what baton's default template (for models without one) teaches.
std::string detect_format(std::string_view template_source);

}  // namespace baton::toolcall
