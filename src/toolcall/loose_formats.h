#pragma once
// Families whose arguments are almost-JSON literals, converted by loose_value.h:
//  - Gemma 4: <|tool_call>call:NAME{city:<|"|>Paris<|"|>,days:3}<tool_call|>, each call on its
//    own; reasoning is <|channel>thought\n…<channel|>.
//  - LFM2 (Liquid): <|tool_call_start|>[get_weather(city='Paris', days=3), f()]<|tool_call_end|>,
//    Python calls with keyword arguments.
#include "toolcall/output_format.h"

namespace baton::toolcall {

class Gemma4Format : public OutputFormat {
 public:
  std::string_view name() const override { return "gemma4"; }
  ParsedOutput parse(std::string_view text, bool final) const override;
  std::vector<std::string> markers() const override;
  std::string call_trigger() const override { return "<|tool_call>"; }
  // gemma4_grammar.cpp
  std::string call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const override;
};

class PythonicFormat : public OutputFormat {
 public:
  std::string_view name() const override { return "lfm2"; }
  ParsedOutput parse(std::string_view text, bool final) const override;
  std::vector<std::string> markers() const override;
  std::string call_trigger() const override { return "<|tool_call_start|>"; }
  std::string call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const override;
};

}  // namespace baton::toolcall
