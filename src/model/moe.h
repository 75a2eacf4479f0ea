#pragma once
// The mixture-of-experts FFN over the rows of one forward step.
//
// Every row is routed on its own (router logits, then the gating policy of MoeParams), the rows
// are grouped by expert so that each chosen expert's matrices are read once per step whatever
// number of rows chose it, and each row's output sums its experts' outputs in the row's own
// rank order. Nothing a row computes depends on the other rows: the matmul kernels give a row
// the same bits in any batch, and the sum's order is the row's own, so logits stay batch
// invariant.
#include <cstdint>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/thread_pool.h"
#include "model/hparams.h"
#include "model/weights.h"

namespace baton::model {

// The experts one token goes through, most weighty first: ids[0..p.n_used) and their weights,
// from the router's logits for that token (p.n_expert of them). Ties go to the lower expert id;
// NaN logits rank last.
void route_experts(const MoeParams& p, const float* logits, int32_t* ids, float* weights);

// Buffers reused across layers and steps.
struct MoeScratch {
  std::vector<float> logits;    // n x n_expert
  std::vector<int32_t> ids;     // n x k, rank order
  std::vector<float> weights;   // n x k
  std::vector<int64_t> slot;    // n x k: the row's place among all experts' gathered rows
  std::vector<int64_t> offset;  // n_expert + 1: first gathered row of each expert
  std::vector<int64_t> filled;  // n_expert
  std::vector<float> xin;       // gathered inputs, n x k rows of n_embd, grouped by expert
  std::vector<float> fused;     // gate | up (or gate alone) of each gathered row
  std::vector<float> up;        // up of each gathered row, when gate and up are apart
  std::vector<float> hidden;    // act(gate, up), n_ff per gathered row
  std::vector<float> yout;      // each gathered row's expert output, n_embd
  std::vector<kernels::MatmulJob> jobs;
};

// out[r] (n_embd floats) = sum over row r's experts j, in rank order, of
// weight_j * down_j(act(gate_j xn[r], up_j xn[r])), with the experts' biases (when the weights
// carry them) added after each product and p.act the activation. pool may be null.
void moe_ffn(const MoeWeights& w, const MoeParams& p, int64_t n_embd, const float* xn, int64_t n,
             float* out, MoeScratch& s, kernels::ThreadPool* pool);

}  // namespace baton::model
