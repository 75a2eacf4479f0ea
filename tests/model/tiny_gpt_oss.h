#pragma once
// The small gpt-oss shape the model tests synthesise: 4 heads of 32 (q width 128 over embd 64),
// 2 KV heads, 4 experts of which 2 are used, a window of `swa` in layers 0, 2, ...
#include <cstdint>

#include "synth/synth_model.h"

namespace baton::testing {

inline synth::SynthSpec tiny_gpt_oss_spec(int64_t layers, int64_t swa, uint64_t seed) {
  synth::SynthSpec spec;
  spec.arch = "gpt-oss";
  spec.embd = 64;
  spec.layers = layers;
  spec.heads = 4;
  spec.kv_heads = 2;
  spec.head_dim = 32;
  spec.experts = 4;
  spec.experts_used = 2;
  spec.expert_ff = 32;
  spec.swa = swa;
  spec.seed = seed;
  spec.threads = 1;
  return spec;
}

}  // namespace baton::testing
