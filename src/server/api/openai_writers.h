#pragma once
// AnswerWriters for /v1/chat/completions and /v1/completions.
//  - Streamed: a role chunk per choice (chat), content / reasoning_content / tool_calls chunks
//    tagged with their choice's index as text becomes safe to send, each choice's finish chunk
//    when it ends, the usage chunk (include_usage) and [DONE]; a request that fails gets an error
//    event and [DONE].
//  - Not streamed: the chat.completion / text_completion object with every choice.
#include <memory>

#include "server/answer/answer_writer.h"

namespace baton::server {

struct OpenAiAnswer {
  ResponseMeta meta;
  size_t n_choices = 1;
  bool include_usage = false;
};

std::unique_ptr<AnswerWriter> make_chat_writer(OpenAiAnswer a);
std::unique_ptr<AnswerWriter> make_text_writer(OpenAiAnswer a);

}  // namespace baton::server
