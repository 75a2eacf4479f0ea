#pragma once
// Single-sequence generation on an engine (what `baton run` and the tests use): prefill in
// chunks, then sample and decode one token at a time until n tokens or an end-of-generation.
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/engine.h"
#include "engine/sampler.h"
#include "engine/token_constraint.h"

namespace baton::engine {

struct GenerateOptions {
  int32_t max_tokens = 128;
  int32_t prefill_chunk = 512;
  bool stop_at_eog = true;
  SamplingParams sampling;
  TokenConstraint* constraint = nullptr;  // optional: structured output
};

struct GenerateResult {
  std::vector<int32_t> tokens;      // generated ids (without an ending EOG)
  std::vector<float> first_logits;  // logits after the last prompt token
  bool stopped_at_eog = false;
  bool complete = false;  // the constraint's output is complete
  double prompt_ms = 0;
  double gen_ms = 0;
};

// Allocates KV for prompt + max_tokens (this drops anything cached before). on_token, when
// set, sees every generated id as soon as it is sampled. Throws std::runtime_error on an empty
// prompt or an engine failure.
GenerateResult generate(Engine& engine, const std::vector<int32_t>& prompt,
                        const GenerateOptions& opts,
                        const std::function<void(int32_t)>& on_token = nullptr);

}  // namespace baton::engine
