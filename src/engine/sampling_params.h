#pragma once
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace baton::engine {

// (token id, bias) pairs, ids ascending and distinct.
using LogitBias = std::vector<std::pair<int32_t, float>>;

struct SamplingParams {
  float temperature = 1.0f;         // 0 = greedy
  int32_t top_k = 0;                // 0 = off
  float top_p = 1.0f;               // 1 = off
  float min_p = 0.0f;               // 0 = off
  float repetition_penalty = 1.0f;  // 1 = off; applied over the last `penalty_last_n` tokens
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  int32_t penalty_last_n = 64;
  uint64_t seed = 0xBA7011;  // per request; same seed + inputs give the same tokens
  int32_t top_logprobs = 0;  // number of alternatives to report (0..20)
  bool logprobs = false;     // report the sampled token's logprob
  // Added to the logits before anything else looks at them (OpenAI's logit_bias); ids past the
  // vocabulary are skipped. Shared: every choice of a request (and every copy of its params)
  // carries the same list, which may hold up to a vocabulary's entries.
  std::shared_ptr<const LogitBias> logit_bias;
};

}  // namespace baton::engine
