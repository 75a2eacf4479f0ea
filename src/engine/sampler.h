#pragma once
// Turns logits into the next token: the logit bias, penalties over recent history, then greedy or
// top-k → top-p → min-p → temperature → a draw from the request's own seeded PRNG.
#include <cstdint>
#include <utility>
#include <vector>

#include "engine/rng.h"
#include "engine/sampling_params.h"

namespace baton::engine {

struct SampledToken {
  int32_t id = -1;
  // Only when the params ask for logprobs or top_logprobs (else 0 and empty): id's logprob under
  // the full penalised softmax (before truncation and temperature), and the top_logprobs
  // alternatives, best first.
  float logprob = 0;
  std::vector<std::pair<int32_t, float>> top;
};

// One per request. sample() is a pure function of the logits, the params, the history and the
// sampler's PRNG state (one draw per sampled token, none for greedy), so a parked request that
// resumes with its sampler draws the same tokens. It runs on the engine loop for every decode
// row, so it never sorts the vocabulary: greedy is one argmax pass, top-k a heap, top-p and
// min-p gather only the head of the distribution, and no call allocates once its thread's
// buffers have grown to the vocabulary.
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
  // A token drawn from l (n tokens, largest logit mx at best_id, finite) after truncation.
  // z1 receives the vocabulary's Σ e^(l - mx) when the draw computed it on the way.
  int32_t draw(const float* l, int32_t n, float mx, int32_t best_id, double& z1);

  SamplingParams p_;
  Rng rng_;
};

}  // namespace baton::engine
