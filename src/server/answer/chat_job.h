#pragma once
// A chat request, whichever API it arrived in (chat completions, Responses, Anthropic Messages),
// once read into a ChatRequest: the prompt from the chat template, the tool-call and output
// constraints, submission to the engine loop, and the answer through the API's AnswerWriter.
#include <memory>

#include "server/answer/answer_job.h"
#include "server/answer/answer_writer.h"
#include "server/api/openai_request.h"
#include "server/server_routes.h"

namespace baton::server {

// Renders, constrains and submits `chat` (n choices: chat.n), then answers through `writer`:
// as SSE when chat.common.stream, else as one JSON body. Throws ApiError for what is refused
// before anything runs (a prompt over the context, a full queue, a bad schema).
void run_chat(const ServeContext& c, ChatRequest chat, std::unique_ptr<AnswerWriter> writer,
              HttpResponse& res);

// The number of prompt tokens `chat` renders to (Anthropic's count_tokens).
int32_t count_chat_prompt_tokens(const ServeContext& c, const ChatFields& chat);

}  // namespace baton::server
