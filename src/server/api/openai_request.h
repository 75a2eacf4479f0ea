#pragma once
// OpenAI request parsing and validation (→ internal structs) for /v1/chat/completions and
// /v1/completions. Every rejection is an ApiError(400) naming the field. The response objects
// are built by openai_objects.h.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "constraint/constraint_compiler.h"
#include "engine/sampling_params.h"
#include "server/api/chat_schema.h"
#include "server/api/request_json.h"

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
  // The conversation this request continues: the session header (HttpRequest::session) or else
  // the body's prompt_cache_key. Only for the per-session cache figures in /status and /metrics.
  std::string session;
  constraint::ConstraintSpec constraint;  // response_format / grammar / regex
  int32_t n = 1;  // choices per prompt (OpenAI's n), each sampled on its own
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
// Prompt text of more than limits.max_prompt_bytes cannot fit the context in tokens, so it is
// refused (400 context_length_exceeded naming `param`) before it is tokenised.
void check_prompt_bytes(size_t bytes, const RequestLimits& limits, const char* param);

}  // namespace baton::server
