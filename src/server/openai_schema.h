#pragma once
// OpenAI request parsing and validation (→ internal structs) and response JSON builders for
// /v1/chat/completions and /v1/completions. Every rejection is an ApiError(400) naming the field.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/sampling_params.h"
#include "server/chat_schema.h"
#include "server/output_constraint.h"
#include "toolcall/output_parser.h"

namespace baton::server {

struct RequestLimits {
  int32_t max_tokens_limit = 4096;  // --max-tokens-limit: the largest max_tokens accepted
  int32_t n_vocab = 0;              // token ids in prompts must be below this (0 = unchecked)
  // Bounds that reject a prompt that cannot fit the context before it is materialised or
  // tokenised (0 = unchecked): no JSON array may hold more than `max_array_items` entries (a
  // token-id prompt longer than --ctx), and prompt text (all message contents together) may
  // not exceed `max_prompt_bytes` (--ctx × the most bytes one token covers).
  size_t max_array_items = 0;
  size_t max_prompt_bytes = 0;
  int32_t ctx = 0;  // for the messages
};

// The most choices (n, best_of, prompts in a list) one request may ask for.
inline constexpr int32_t kMaxChoicesPerRequest = 64;

// Fields shared by chat and text completions.
struct CommonRequest {
  std::string model;  // empty: the loaded model
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  std::optional<int32_t> max_tokens;
  engine::SamplingParams sampling;
  std::vector<std::string> stop;  // at most 4, none empty
  bool ignore_eos = false;
  std::string user;
  ConstraintSpec constraint;  // response_format / grammar / regex
  int32_t n = 1;              // choices per prompt (OpenAI's n), each sampled on its own
};

struct ChatRequest {
  CommonRequest common;
  ChatFields chat;  // messages, tools, tool_choice, chat_template_kwargs
};

struct CompletionPrompt {
  bool is_tokens = false;
  std::string text;
  std::vector<int32_t> tokens;
};

struct CompletionRequest {
  CommonRequest common;
  std::vector<CompletionPrompt> prompts;  // a list of prompts: one group of n choices each
  bool echo = false;                      // each choice's text starts with its prompt
  int32_t best_of = 0;                    // > n: run best_of per prompt, keep the n most likely
};

// Parse a body; throw ApiError(400) on malformed JSON, wrong types or out-of-range values.
ChatRequest parse_chat_request(const std::string& body, const RequestLimits& limits);
CompletionRequest parse_completion_request(const std::string& body, const RequestLimits& limits);
// Parse the body as a JSON object (400 when it is not one).
// `max_array_items` > 0: a longer array anywhere is refused while parsing (400
// context_length_exceeded), so an 8 MB array of token ids never becomes 8 MB of JSON values.
nlohmann::json parse_json_object(const std::string& body, size_t max_array_items = 0,
                                 int32_t ctx = 0);

// Prompt text of more than limits.max_prompt_bytes cannot fit the context in tokens, so it is
// refused (400 context_length_exceeded naming `param`) before it is tokenised.
void check_prompt_bytes(size_t bytes, const RequestLimits& limits, const char* param);

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
