#pragma once
// A gated DeltaNet layer (the linear-attention layers of hybrid models such as qwen35moe) over
// the rows of one forward step.
//
// Per token: q|k|v = W_qkv x passes a causal depthwise convolution over the last d_conv inputs
// of its sequence, then SiLU; q and k are L2-normalised per head. Each value head h (paired with
// key head SsmParams::key_head(h)) keeps a head_dim x head_dim state S that decays by exp(g), with
// g = softplus(W_alpha x + dt_bias) * a, and takes the delta-rule update
// S += k (beta (v - S^T k))^T, beta = sigmoid(W_beta x). The head's output S^T q / sqrt(head_dim)
// is RMS-normed, times silu(W_z x), and all heads go through W_out.
//
// Batch invariance: the projections are matmuls (a row's bits do not depend on the batch); the
// convolution and the state update run token by token in each sequence's own order with a fixed
// order of arithmetic, so a sequence's outputs and states are bit-identical whatever shares the
// step and however its tokens are split into steps.
#include <cstdint>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/simd.h"
#include "kernels/thread_pool.h"
#include "model/hparams.h"

namespace baton::model {

struct DeltaNetWeights {
  kernels::MatrixView qkv{};    // attn_qkv: conv_dim rows (q of the key heads, k, v)
  kernels::MatrixView z{};      // attn_gate: value_dim rows, the output gate
  kernels::MatrixView beta{};   // ssm_beta: n_v_heads rows
  kernels::MatrixView alpha{};  // ssm_alpha: n_v_heads rows
  // qwen3next's ssm_ba instead of the two above: 2 x n_v_heads rows, per key head its
  // group's betas then its alphas.
  kernels::MatrixView beta_alpha{};
  kernels::MatrixView out{};   // ssm_out: n_embd rows of value_dim
  std::vector<float> conv;     // ssm_conv1d: conv_dim channels of d_conv taps, oldest first
  std::vector<float> dt_bias;  // ssm_dt.bias, per value head
  std::vector<float> a;        // ssm_a (-exp(A_log)), per value head
  std::vector<float> norm;     // ssm_norm, head_dim
};

// A copy of the layer's part of a sequence's state after its first `rows` rows in the step
// (a checkpoint at a block end inside the step), laid out as DeltaNetSeq's.
struct DeltaNetCapture {
  int32_t rows = 0;  // 1..n_rows, increasing within a sequence
  float* conv = nullptr;
  float* matrix = nullptr;
};

// One sequence's rows in the step and its state in the layer, updated in place.
struct DeltaNetSeq {
  int64_t row0 = 0;
  int32_t n_rows = 0;
  float* conv = nullptr;    // (d_conv - 1) x conv_dim: the inputs before row0, oldest first
  float* matrix = nullptr;  // n_v_heads x head_dim x head_dim; [h][j][i] is S[i][j] of head h
  std::vector<DeltaNetCapture> captures;
};

// Buffers reused across layers and steps.
struct DeltaNetScratch {
  std::vector<float> qkv;    // n x conv_dim, the projection, then the convolution's output
  std::vector<float> mixed;  // n x conv_dim, the projection while the convolution reads it
  std::vector<float> z, beta, alpha;
  std::vector<float> beta_alpha;  // n x 2 n_v_heads, qwen3next's joint projection
  std::vector<float> heads;       // n x value_dim, the normed and gated head outputs
  std::vector<kernels::MatmulJob> jobs;
};

// out (n x n_embd) = the layer's output for the n rows of xn (n x n_embd), whose sequences are
// `seqs` (rows in the order of the batch, every row in exactly one). pool may be null.
void delta_net(const DeltaNetWeights& w, const SsmParams& p, float rms_eps, const float* xn,
               int64_t n, const std::vector<DeltaNetSeq>& seqs, float* out, DeltaNetScratch& s,
               kernels::ThreadPool* pool);

// The state update of one value head for one token, exposed for tests: m (head_dim x head_dim,
// [j][i] = S[i][j]) decays by exp(g), takes the delta rule with k, v and beta, and o gets
// S^T q * scale. q and k are already normalised.
void delta_rule_step(float* m, const float* q, const float* k, const float* v, float g, float beta,
                     float scale, int32_t head_dim, float* o);
// The same at an explicit SIMD level (clamped to what the CPU supports; a head width the level's
// lanes do not divide runs at the next level down): the one every token of a process uses.
void delta_rule_step_at(kernels::SimdLevel level, float* m, const float* q, const float* k,
                        const float* v, float g, float beta, float scale, int32_t head_dim,
                        float* o);

}  // namespace baton::model
