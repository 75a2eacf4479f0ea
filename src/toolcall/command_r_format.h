#pragma once
// Cohere Command R family. Command R+ writes its calls as a JSON list after "Action:" in a
// ```json fence; Command R7B and later (Cohere2) put the list between <|START_ACTION|> and
// <|END_ACTION|>, with a call id in each item, the answer between <|START_RESPONSE|> and
// <|END_RESPONSE|> and reasoning between <|START_THINKING|> and <|END_THINKING|>:
//   [{"tool_call_id": "0", "tool_name": "get_weather", "parameters": {"city": "Paris"}}]
// The calls appear once the whole list is written.
#include "toolcall/output_format.h"

namespace baton::toolcall {

class CommandRFormat : public OutputFormat {
 public:
  std::string_view name() const override { return "command-r"; }
  ParsedOutput parse(std::string_view text, bool final) const override;
  std::vector<std::string> markers() const override;
  std::string call_trigger() const override { return "<|START_ACTION|>"; }
  std::string call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const override;
};

}  // namespace baton::toolcall
