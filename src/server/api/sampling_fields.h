#pragma once
// Sampling fields of requests: the basic ones every API reads (one reader, each API's ranges as
// data), and those of /v1/chat/completions and /v1/completions beyond them, each applied
// (logit_bias, llama.cpp's names for the penalties, reasoning_effort) or refused with a 400 that
// says what to send instead, never accepted and left without effect.
#include <cstdint>
#include <memory>

#include "engine/sampling_params.h"
#include "server/api/json_fields.h"

namespace baton::server {

// The basic sampling fields each API reads, with its own ranges as data: OpenAI's temperature
// runs 0-2 and Anthropic's 0-1; top_k is Anthropic's and an extension of chat and completions
// (llama.cpp, vLLM), not a Responses API field.
struct SamplingFields {
  double temperature_max = 2;
  bool top_k = true;
};
inline constexpr SamplingFields kOpenAiSampling{2, true};      // chat and completions
inline constexpr SamplingFields kResponsesSampling{2, false};  // /v1/responses
inline constexpr SamplingFields kAnthropicSampling{1, true};   // /v1/messages

// temperature, top_p and (where the API has it) top_k, each within the API's range; a 400
// naming the field otherwise.
void parse_basic_sampling(const RequestJson& obj, const SamplingFields& api,
                          engine::SamplingParams& sp);

// OpenAI's logit_bias: {"<token id>": bias}, bias in [-100, 100], ids below n_vocab (when
// n_vocab > 0). Null or absent: no bias. 400 naming logit_bias for anything else.
std::shared_ptr<const engine::LogitBias> parse_logit_bias(const RequestJson& obj, int32_t n_vocab);

// logit_bias, llama.cpp's repeat_penalty / repeat_last_n, and a 400 for every known field that
// asks for sampling this server does not do (a neutral value, such as typical_p 1, passes).
void parse_extra_sampling(const RequestJson& obj, int32_t n_vocab, engine::SamplingParams& sp);

// Chat-only fields with no counterpart here (legacy functions, audio, web search, verbosity):
// 400 naming the field and its replacement.
void refuse_unserved_chat_fields(const RequestJson& obj);

// Chat's reasoning_effort, passed to the template as `reasoning_effort` (as the Responses API
// passes reasoning.effort) for templates that read it; one given in chat_template_kwargs wins.
void apply_reasoning_effort(const RequestJson& obj, RequestJson& template_kwargs);

}  // namespace baton::server
