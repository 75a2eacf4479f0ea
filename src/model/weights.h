#pragma once
// Views of a model's weights inside the GGUF mapping. Matrices stay in the mmap in their stored
// type; only the small 1-D tensors (norms, biases, RoPE factors) are expanded to float.
#include <vector>

#include "gguf/gguf_file.h"
#include "kernels/matmul.h"
#include "model/hparams.h"

namespace baton::model {

struct LayerWeights {
  std::vector<float> attn_norm;
  kernels::MatrixView wq, wk, wv, wo;
  std::vector<float> bq, bk, bv;      // qwen2 only; empty otherwise
  std::vector<float> q_norm, k_norm;  // qwen3 only (per-head RMSNorm weights, head_dim)
  std::vector<float> ffn_norm;
  kernels::MatrixView w_gate, w_up, w_down;
  // Set (data not null) when the matrices are interleaved and stacked in one block of memory:
  // rows of wq then wk then wv, and of w_gate then w_up, so each pair or triple that multiplies
  // the same activations runs as one matmul (see model/weight_arena.h).
  kernels::MatrixView wqkv{}, w_gate_up{};
};

struct ModelWeights {
  kernels::MatrixView token_embd;
  std::vector<LayerWeights> layers;
  std::vector<float> output_norm;
  kernels::MatrixView output;            // token_embd when the file has no output.weight (tied)
  std::vector<float> rope_freqs;         // per rotated pair divisor of the frequency; may be empty
  uint64_t matmul_params_per_token = 0;  // weights every token multiplies through
  uint64_t matmul_bytes_per_token = 0;   // bytes of those weights (what a decode step reads)
};

// Finds and checks every tensor (presence, type, shape). Sets h.n_vocab. Throws
// std::runtime_error naming the tensor and what was expected.
ModelWeights load_weights(const gguf::GgufFile& f, HParams& h);

}  // namespace baton::model
