#pragma once
#include <cstdint>

namespace baton::engine {

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
};

}  // namespace baton::engine
