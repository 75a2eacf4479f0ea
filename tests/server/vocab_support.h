#pragma once
// Real vocabularies from ../shared for the server's tokenizer-facing tests, and ChatML variants
// of them: no shared vocabulary carries <|im_start|>, so those get the two markers appended as
// control tokens, the way a Qwen-style GGUF lists them after the BPE vocabulary.
#include <memory>
#include <string>

#include "gguf/gguf_file.h"
#include "support/shared_files.h"
#include "tokenizer/tokenizer.h"

namespace baton::server::testing {

inline std::string vocab_file(const std::string& name) {
  return "models/vocab/ggml-vocab-" + name + ".gguf";
}

// Empty spec (no tokens) when the file is not on this machine.
inline tokenizer::VocabSpec shared_vocab_spec(const std::string& name) {
  auto path = ::baton::testing::shared_file(vocab_file(name));
  if (path.empty()) return {};
  auto f = gguf::GgufFile::open(path.string());
  return tokenizer::vocab_spec_from_gguf(*f);
}

inline void add_control_token(tokenizer::VocabSpec& spec, const std::string& text) {
  spec.tokens.push_back(text);
  if (!spec.scores.empty()) spec.scores.push_back(0.0f);
  spec.types.resize(spec.tokens.size() - 1, static_cast<int32_t>(tokenizer::TokenType::Normal));
  spec.types.push_back(static_cast<int32_t>(tokenizer::TokenType::Control));
}

// The shared vocabulary `name` plus <|im_start|> and <|im_end|>; `pre` overrides its
// pre-tokenizer when not empty. nullptr when the file is absent.
inline std::unique_ptr<tokenizer::Tokenizer> chatml_vocab(const std::string& name,
                                                          const std::string& pre = "") {
  tokenizer::VocabSpec spec = shared_vocab_spec(name);
  if (spec.tokens.empty()) return nullptr;
  if (!pre.empty()) spec.pre = pre;
  add_control_token(spec, "<|im_start|>");
  add_control_token(spec, "<|im_end|>");
  return tokenizer::Tokenizer::from_spec(std::move(spec));
}

}  // namespace baton::server::testing
