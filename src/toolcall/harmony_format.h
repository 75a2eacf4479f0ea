#pragma once
// OpenAI's harmony response format (gpt-oss). The model writes messages, each a header and a
// body: <|channel|>analysis<|message|>…<|end|> is reasoning;
// <|start|>assistant<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{…}<|call|>
// is a call (the recipient may also stand before <|channel|>); the final channel, and commentary
// without a recipient (a preamble), are content.
#include "toolcall/output_format.h"

namespace baton::toolcall {

class HarmonyFormat : public OutputFormat {
 public:
  std::string_view name() const override { return "gpt-oss"; }
  bool answers_in_channels() const override { return true; }
  ParsedOutput parse(std::string_view text, bool final) const override;
  std::vector<std::string> markers() const override;
  // A forced answer is the call itself, right after the generation prompt's "<|start|>assistant":
  // no analysis message first (a model may reason without end, and no other format lets text
  // precede a forced call either); parallel calls follow as further assistant messages.
  std::string call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const override;
};

}  // namespace baton::toolcall
