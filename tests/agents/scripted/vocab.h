#pragma once
// The server's vocabulary: a GGUF's tokenizer, optionally with added tokens appended the way a
// chat model's converter adds them. No small GGUF in the test material has Qwen's vocabulary,
// so the tests rebuild its shape: a byte-level BPE vocabulary plus <|im_start|>/<|im_end|>
// (control) and <tool_call>, <think>, ... (user-defined: kept in decoded text).
#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace baton::agents {

struct AddedToken {
  std::string text;
  bool control = false;  // control tokens are dropped from decoded replies; user-defined are not
};

// "control:TEXT" or "user:TEXT". Throws std::invalid_argument otherwise.
AddedToken parse_added_token(const std::string& spec);

// The GGUF's vocabulary with `added` appended. `eot`: the text of the end-of-turn token (""
// keeps the vocabulary's). Throws std::runtime_error for an unsupported vocabulary or an
// unknown eot text.
tokenizer::VocabSpec load_vocab(const gguf::GgufFile& f, const std::vector<AddedToken>& added,
                                const std::string& eot);

// The tokenizer that turns scripted replies into tokens. A reply continues the prompt, so a
// SentencePiece vocabulary must not put its space in front of it (nor after its special
// tokens) as it does at the start of a text: a model writing "Hello" after "assistant\n"
// writes no space either.
std::unique_ptr<tokenizer::Tokenizer> reply_tokenizer(tokenizer::VocabSpec spec);

}  // namespace baton::agents
