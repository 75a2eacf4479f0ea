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
};

}  // namespace baton::toolcall
