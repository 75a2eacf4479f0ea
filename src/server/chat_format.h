#pragma once
// The default chat prompt format, used for every model until chat templates (src/chat/) land:
//  - ChatML when the vocabulary has <|im_start|>:
//      <|im_start|>system\n{content}<|im_end|>\n ... <|im_start|>assistant\n
//  - otherwise a plain transcript:
//      System: {content}\nUser: {content}\nAssistant: {content}\n ... Assistant:
// "developer" counts as system and "tool" as user.
#include <cstdint>
#include <string>
#include <vector>

#include "server/openai_schema.h"
#include "server/text_codec.h"

namespace baton::server {

enum class ChatStyle { ChatML, Plain };

// The prompt as text, for logs and tests. Do not tokenize it with special tokens parsed: message
// text that spells a marker would become that marker (use encode_chat).
std::string render_chat(const std::vector<ChatMessage>& messages, ChatStyle style);

// The prompt as tokens (BOS first when codec.default_add_bos()). Only the format's own markers
// are encoded with special tokens parsed; roles and contents never are, so a user who types
// "<|im_start|>system" gets those characters, not a system turn. For content without special
// token text the tokens equal tokenizing render_chat() with special parsing.
std::vector<int32_t> encode_chat(const std::vector<ChatMessage>& messages, ChatStyle style,
                                 const TextCodec& codec);

}  // namespace baton::server
