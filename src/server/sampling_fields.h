#pragma once
// Request fields of /v1/chat/completions and /v1/completions that change the answer beyond the
// basic sampling fields: each is applied (logit_bias, llama.cpp's names for the penalties,
// reasoning_effort) or refused with a 400 that says what to send instead, never accepted and
// left without effect.
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>

#include "engine/sampling_params.h"

namespace baton::server {

// OpenAI's logit_bias: {"<token id>": bias}, bias in [-100, 100], ids below n_vocab (when
// n_vocab > 0). Null or absent: no bias. 400 naming logit_bias for anything else.
std::shared_ptr<const engine::LogitBias> parse_logit_bias(const nlohmann::json& obj,
                                                          int32_t n_vocab);

// logit_bias, llama.cpp's repeat_penalty / repeat_last_n, and a 400 for every known field that
// asks for sampling this server does not do (a neutral value, such as typical_p 1, passes).
void parse_extra_sampling(const nlohmann::json& obj, int32_t n_vocab, engine::SamplingParams& sp);

// Chat-only fields with no counterpart here (legacy functions, audio, web search, verbosity):
// 400 naming the field and its replacement.
void refuse_unserved_chat_fields(const nlohmann::json& obj);

// Chat's reasoning_effort, passed to the template as `reasoning_effort` (as the Responses API
// passes reasoning.effort) for templates that read it; one given in chat_template_kwargs wins.
void apply_reasoning_effort(const nlohmann::json& obj, nlohmann::ordered_json& template_kwargs);

}  // namespace baton::server
