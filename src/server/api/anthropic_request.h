#pragma once
// Anthropic Messages bodies (POST /v1/messages and /v1/messages/count_tokens) read into the chat
// pipeline's ChatRequest. The body is translated to chat-completions-shaped messages, tools and
// tool_choice and then normalised by parse_chat_fields, so a chat template sees the same
// messages whichever API a conversation arrived in:
//  - `system` (a string or text blocks) becomes a leading system message;
//  - a user turn's tool_result blocks become tool messages, in order, before the turn's text;
//  - an assistant turn's tool_use blocks become tool_calls, its thinking blocks
//    reasoning_content; consecutive turns of one role are merged, as Anthropic does;
//  - custom tools become function tools; server tools (web search, bash, text editor, ...) are
//    left out of what the model sees, since nothing here runs them;
//  - `thinking` switches the template's `enable_thinking`.
// Every rejection is an ApiError(400) naming the field.
#include <string>

#include "server/api/openai_request.h"

namespace baton::server {

struct MessagesRequest {
  ChatRequest chat;   // chat.common.model is left empty: the served model answers (see .cpp)
  std::string model;  // the model the client named, echoed back in the answer
};

// A /v1/messages body: `model`, `max_tokens` and `messages` are required.
MessagesRequest parse_messages_request(const std::string& body, const RequestLimits& limits);
// A /v1/messages/count_tokens body: the same fields, but max_tokens is not needed (and sampling
// fields are not read).
MessagesRequest parse_count_tokens_request(const std::string& body, const RequestLimits& limits);

}  // namespace baton::server
