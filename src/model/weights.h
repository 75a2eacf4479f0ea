#pragma once
// Views of a model's weights inside the GGUF mapping. Matrices stay in the mmap in their stored
// type; only the small 1-D tensors (norms, biases, RoPE factors) are expanded to float.
#include <vector>

#include "gguf/gguf_file.h"
#include "kernels/matmul.h"
#include "model/delta_net.h"
#include "model/hparams.h"
#include "model/shared_expert.h"

namespace baton::model {

// What a layer's FFN is: one dense SiLU-gated MLP, or a router over experts of that form.
enum class FfnKind { Dense, Moe };

// A mixture-of-experts FFN. Each expert's matrices are views of its own rows of the file's 3-D
// tensors (expert e of ffn_gate_exps is rows [e * n_ff, (e + 1) * n_ff) of an
// (n_expert * n_ff) x n_embd matrix), so the matmul kernels and the interleaved layout take
// them as they take any matrix, and a step reads only the experts its tokens chose.
struct MoeWeights {
  kernels::MatrixView router;                       // ffn_gate_inp: n_expert rows x n_embd
  std::vector<kernels::MatrixView> gate, up, down;  // per expert: n_ff x n_embd, n_embd x n_ff
  // Per expert, gate then up stacked (data not null) when interleaved, as w_gate_up.
  std::vector<kernels::MatrixView> gate_up;
  SharedExpertWeights shared;  // qwen35moe: beside the routed experts; absent elsewhere
  // Biases (gpt-oss; empty otherwise): router_bias n_expert; gate_bias and up_bias n_ff per
  // expert, down_bias n_embd per expert, expert after expert.
  std::vector<float> router_bias, gate_bias, up_bias, down_bias;
};

struct LayerWeights {
  std::vector<float> attn_norm;
  kernels::MatrixView wq, wk, wv, wo;
  std::vector<float> bq, bk, bv;      // qwen2 and gpt-oss; empty when the file has none
  std::vector<float> bo;              // attn_output.bias (gpt-oss); empty when absent
  std::vector<float> q_norm, k_norm;  // qwen3 only (per-head RMSNorm weights, head_dim)
  // One logit per query head that joins the head's softmax denominator without contributing a
  // value (gpt-oss's attn_sinks); empty for none.
  std::vector<float> sinks;
  std::vector<float> ffn_norm;  // gpt-oss names it post_attention_norm
  // gemma3's norms of each sublayer's output before its residual add; empty for none.
  std::vector<float> post_attn_norm, post_ffn_norm;
  FfnKind ffn = FfnKind::Dense;
  kernels::MatrixView w_gate{}, w_up{}, w_down{};  // Dense only
  MoeWeights moe;                                  // Moe only
  // Set (data not null) when the matrices are interleaved and stacked in one block of memory:
  // rows of wq then wk then wv, and of w_gate then w_up, so each pair or triple that multiplies
  // the same activations runs as one matmul (see model/weight_arena.h).
  kernels::MatrixView wqkv{}, w_gate_up{};
  // A gated DeltaNet layer of a hybrid model has these instead of attention (wq..wo empty).
  bool recurrent = false;
  DeltaNetWeights dnet;
};

struct ModelWeights {
  kernels::MatrixView token_embd;
  std::vector<LayerWeights> layers;
  std::vector<float> output_norm;
  kernels::MatrixView output;     // token_embd when the file has no output.weight (tied)
  std::vector<float> rope_freqs;  // per rotated pair divisor of the frequency; may be empty
  // Weights every token multiplies through (of a MoE layer: the router and n_used experts,
  // counted at the average expert size) and their bytes (what a decode step reads).
  uint64_t matmul_params_per_token = 0;
  uint64_t matmul_bytes_per_token = 0;
};

// Finds and checks every tensor (presence, type, shape). Sets h.n_vocab (and h.moe.n_ff when
// the file has no key for it). Throws
// std::runtime_error naming the tensor and what was expected.
ModelWeights load_weights(const gguf::GgufFile& f, HParams& h);

}  // namespace baton::model
