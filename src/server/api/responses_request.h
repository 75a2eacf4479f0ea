#pragma once
// A POST /v1/responses body (OpenAI's Responses API) read into the ChatRequest that chat
// completions run on. The body is translated into the chat-completions shape and checked by
// parse_chat_fields, so both APIs render the same prompt for the same conversation:
//  - instructions → a leading system message; input (a string, or items) → messages: message
//    items (user/assistant/system/developer, text parts), function_call items → an assistant
//    message's tool_calls (consecutive calls share one message), function_call_output → tool
//    messages, reasoning items → the next assistant message's reasoning_content;
//  - tools: function tools, and the functions inside namespace tools (the model sees one flat
//    list; a call names its namespace again in the answer); built-in tools this server cannot
//    run (web_search, file_search, mcp, custom, ...) are left out of the prompt and logged;
//  - text.format → the same constraints as response_format.
// Nothing is stored: previous_response_id, conversation and item references are refused, and the
// answer says store: false whatever was asked. Every rejection is an ApiError(400) naming the
// field.
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "server/api/openai_request.h"

namespace baton::server {

// How the client declared a function the model sees under another name.
struct DeclaredName {
  std::string ns;    // the namespace tool holding it
  std::string name;  // its name inside the namespace
};

// What a Responses answer repeats from its request, and how its calls are named.
struct ResponsesEcho {
  // The request's settings as the response object shows them: instructions, tools, tool_choice,
  // parallel_tool_calls, temperature, top_p, max_output_tokens, text, reasoning, store,
  // metadata, user, truncation, top_logprobs, service_tier, prompt_cache_key, ...
  nlohmann::json settings = nlohmann::json::object();
  // Model-visible function name → where the client declared it (functions of namespace tools).
  std::map<std::string, DeclaredName> namespaced;
};

struct ResponsesRequest {
  ChatRequest chat;
  ResponsesEcho echo;
};

// Throws ApiError(400) on malformed JSON, wrong types, unsupported items or stored state.
ResponsesRequest parse_responses_request(const std::string& body, const RequestLimits& limits);

}  // namespace baton::server
