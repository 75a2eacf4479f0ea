#pragma once
// Turns logits into the next token: penalties over recent history, then greedy or
// top-k → top-p → min-p → temperature → a draw from the request's own seeded PRNG.
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/rng.h"
#include "engine/sampling_params.h"

namespace baton::engine {

struct SampledToken {
  int32_t id = -1;
  float logprob = 0;  // of id under the full penalised softmax (before truncation/temperature)
  std::vector<std::pair<int32_t, float>> top;  // top_logprobs alternatives, best first
};

class Sampler {
 public:
  explicit Sampler(const SamplingParams& p);
  // history: the sequence so far (prompt and generated); penalties look at its last
  // penalty_last_n tokens. allowed (optional, one bit per id): tokens outside it are never
  // drawn and carry no probability mass, as if their logits were -inf. Returns id -1 when
  // n_vocab <= 0 or when allowed excludes every token.
  SampledToken sample(const float* logits, int32_t n_vocab, const std::vector<int32_t>& history,
                      const std::vector<uint64_t>* allowed = nullptr);
  const SamplingParams& params() const { return p_; }

 private:
  void apply_penalties(std::vector<float>& l, const std::vector<int32_t>& history) const;
  int32_t draw(const std::vector<float>& l);

  SamplingParams p_;
  Rng rng_;
};

}  // namespace baton::engine
