#pragma once
// The JSON objects of OpenAI's /v1/chat/completions and /v1/completions answers: choices,
// chunks, logprobs and usage (the requests are read by openai_request.h).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "toolcall/output_parser.h"

namespace baton::server {

// One generated token's log-probabilities, already turned into text.
struct TokenLogprob {
  std::string token;
  float logprob = 0;
  std::vector<std::pair<std::string, float>> top;
};

struct Usage {
  int32_t prompt_tokens = 0;
  int32_t completion_tokens = 0;
  int32_t cached_tokens = 0;
};

nlohmann::json usage_json(const Usage& u);
// Chat "logprobs" object: {"content": [{token, logprob, bytes, top_logprobs}]}.
nlohmann::json chat_logprobs_json(const std::vector<TokenLogprob>& lps);
// Completions "logprobs" object: {tokens, token_logprobs, top_logprobs, text_offset}.
nlohmann::json completion_logprobs_json(const std::vector<TokenLogprob>& lps, size_t text_offset);

struct ResponseMeta {
  std::string id;  // chatcmpl-… or cmpl-…
  int64_t created = 0;
  std::string model;
};

// One chat choice: {index, message, logprobs, finish_reason}; `message` is chat_message_json's.
nlohmann::json chat_choice_json(size_t index, const nlohmann::json& message,
                                const std::string& finish_reason, const nlohmann::json& logprobs);
// The chat.completion object around its choices.
nlohmann::json chat_response_json(const ResponseMeta& m, nlohmann::json choices, const Usage& u);
// A streamed chat chunk for choice `index`; `delta` is e.g. {"role":"assistant"} or
// {"content":"…"}; finish_reason empty → null.
nlohmann::json chat_chunk_json(const ResponseMeta& m, const nlohmann::json& delta,
                               const std::string& finish_reason, const nlohmann::json& logprobs,
                               size_t index = 0);
// The assistant message of a parsed answer: content (null when only tool calls came),
// reasoning_content and tool_calls when present.
nlohmann::json chat_message_json(const toolcall::ParsedOutput& msg);
// A streamed tool-call delta: {index, id, type, function: {name, arguments}} for a call's first
// delta, {index, function: {arguments}} after.
nlohmann::json tool_call_delta(const toolcall::ToolCallDelta& d);
// "tool_calls" when a finished ("stop") answer called tools, else the engine's reason.
std::string chat_finish_reason(const std::string& engine_reason, const toolcall::ParsedOutput& msg);
// One text completion choice: {index, text, logprobs, finish_reason}.
nlohmann::json text_choice_json(size_t index, const std::string& text,
                                const std::string& finish_reason, const nlohmann::json& logprobs);
nlohmann::json text_response_json(const ResponseMeta& m, nlohmann::json choices, const Usage& u);
nlohmann::json text_chunk_json(const ResponseMeta& m, const std::string& text,
                               const std::string& finish_reason, const nlohmann::json& logprobs,
                               size_t index = 0);
// The include_usage chunk: empty choices plus usage.
nlohmann::json usage_chunk_json(const ResponseMeta& m, bool chat, const Usage& u);

// A fresh response id with the given prefix ("chatcmpl-", "cmpl-").
std::string make_response_id(const std::string& prefix);

}  // namespace baton::server
