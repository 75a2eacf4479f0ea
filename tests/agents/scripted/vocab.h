#pragma once
// The codec's vocabulary: a GGUF's tokenizer, optionally with added tokens appended the way a
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

// `eot`: the text of the end-of-turn token ("" keeps the vocabulary's). Throws
// std::runtime_error for an unsupported vocabulary or an unknown eot text.
std::unique_ptr<tokenizer::Tokenizer> load_tokenizer(const gguf::GgufFile& f,
                                                     const std::vector<AddedToken>& added,
                                                     const std::string& eot);

}  // namespace baton::agents
