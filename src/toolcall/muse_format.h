#pragma once
// Muse Glimmer's ATEM protocol. The model writes messages, each a header naming its recipient
// and a body: " to=self<|message|>…" is reasoning, " to=user<|message|>…" (or a body without a
// header) content, and " to=NAME<|message|>" a call written as
//   <atem:function_calls>\n<atem:invoke name="NAME">\n<atem:parameter name="K">V</atem:parameter>
//   \n</atem:invoke>\n</atem:function_calls>
// (read by the XML engine, values typed by the tools' schemas). A message ends with <|eom|> or
// <|eot|>; the next one opens with <|start|>assistant (the prompt wrote the first one's).
#include "toolcall/xml_call_format.h"

namespace baton::toolcall {

class MuseFormat : public OutputFormat {
 public:
  explicit MuseFormat(const FormatContext& ctx);
  std::string_view name() const override { return "muse-glimmer"; }
  bool answers_in_channels() const override { return true; }
  ParsedOutput parse(std::string_view text, bool final) const override;
  std::vector<std::string> markers() const override;
  // Each call a message to its tool after the prompt's "<|start|>assistant", an optional
  // reasoning message first; no trigger, since a call's header opens like any message's.
  std::string call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const override;

 private:
  bool add_calls(std::string_view body, bool complete, bool final, ParsedOutput& out) const;
  XmlCallFormat calls_;
};

}  // namespace baton::toolcall
