#pragma once
// Kimi K3's tagged channels. Every tag is "<|open|>TAG attrs<|sep|>" … "<|close|>TAG<|sep|>":
//   <|open|>think<|sep|>REASONING<|close|>think<|sep|><|open|>response<|sep|>CONTENT
//   <|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool="NAME" index="1"<|sep|>
//   <|open|>argument key="K" type="string"<|sep|>V<|close|>argument<|sep|>…<|close|>call<|sep|>
//   <|close|>tools<|sep|>
// A call's arguments may instead be one <|open|>json type="object"<|sep|>{…}<|close|>json<|sep|>.
// Attribute values are entity-escaped (&amp; &quot;); argument values are written raw, typed by
// their type= attribute (else by the tool's schema).
#include "toolcall/output_format.h"
#include "toolcall/param_schema.h"

namespace baton::toolcall {

class KimiK3Format : public OutputFormat {
 public:
  explicit KimiK3Format(const FormatContext& ctx);
  std::string_view name() const override { return "kimi-k3"; }
  bool answers_in_channels() const override { return true; }
  ParsedOutput parse(std::string_view text, bool final) const override;
  std::vector<std::string> markers() const override;
  // kimi_k3_grammar.cpp: the reasoning (when the prompt opened think), then the tools
  // section. No trigger: the section's tag opens like every channel's.
  std::string call_grammar(const CallGrammarRequest& req, GrammarSink& sink) const override;

 private:
  ParamSchemas schemas_;
  bool starts_in_response_ = false;  // the prompt opened the response channel (thinking off)
};

}  // namespace baton::toolcall
