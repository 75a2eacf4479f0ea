#pragma once
// The default chat prompt format, used for every model until chat templates (src/chat/) land:
//  - ChatML when the vocabulary has <|im_start|>:
//      <|im_start|>system\n{content}<|im_end|>\n ... <|im_start|>assistant\n
//  - otherwise a plain transcript:
//      System: {content}\nUser: {content}\nAssistant: {content}\n ... Assistant:
// "developer" counts as system and "tool" as user. The result is tokenized with special tokens
// parsed (ChatML) so <|im_start|> becomes one token.
#include <string>
#include <vector>

#include "server/openai_schema.h"

namespace baton::server {

enum class ChatStyle { ChatML, Plain };

std::string render_chat(const std::vector<ChatMessage>& messages, ChatStyle style);

}  // namespace baton::server
