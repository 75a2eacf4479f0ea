#pragma once
// The shared expert of a mixture-of-experts layer (qwen35moe): one SiLU-gated FFN every token
// goes through beside its routed experts, its output scaled by a per-token gate
// sigmoid(w . x). Every product is per row, so a row's result does not depend on the batch.
#include <cstdint>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/thread_pool.h"

namespace baton::model {

struct SharedExpertWeights {
  kernels::MatrixView gate{}, up{}, down{};  // ffn_{gate,up,down}_shexp
  kernels::MatrixView gate_up{};             // gate then up stacked, when interleaved
  std::vector<float> scale;                  // ffn_gate_inp_shexp: n_embd
  bool present() const { return down.data != nullptr; }
};

struct SharedExpertScratch {
  std::vector<float> gate, up, fused, y;
};

// out[r] += sigmoid(scale . xn[r]) * down(silu(gate xn[r]) * up xn[r]) for the n rows of xn
// (n_embd floats each). pool may be null.
void add_shared_expert(const SharedExpertWeights& w, int64_t n_embd, const float* xn, int64_t n,
                       float* out, SharedExpertScratch& s, kernels::ThreadPool* pool);

}  // namespace baton::model
