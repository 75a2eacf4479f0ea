#pragma once
// Causal attention over cached K/V. Keys are walked block by block in position order with an
// online softmax (per query: a running max and sum, the output rescaled when the max rises), and
// every reduction of a query row runs in an order fixed by that row and the cache's block size
// alone, so the result does not depend on what else is in the batch, how rows are tiled, or how
// the prompt was chunked. A sliding window limits a row to its last `window` positions: blocks
// wholly before every row's window are not read, and positions outside a row's window are
// masked out (never mixed in), so a windowed row costs the window, not the context.
#include <cstdint>
#include <vector>

#include "kernels/simd.h"
#include "model/kv_cache.h"

namespace baton::model {

struct AttentionShape {
  int32_t n_head = 0;
  int32_t n_head_kv = 0;
  int32_t head_dim = 0;
  float scale = 1.0f;  // 1/sqrt(head_dim)
  // > 0: the row at position p attends to positions q with p - q < window only.
  int32_t window = 0;
  // n_head logits (may be null): head h's sinks[h] joins its softmax's denominator as one more
  // term exp(sinks[h] - max), with no value: the weights of the real positions sum below 1.
  const float* sinks = nullptr;
};

// Scratch reused across calls by one thread.
struct AttentionScratch {
  std::vector<float> scores;  // one block's scores: scalar block_size; SIMD 2 × block_size × width
  std::vector<float> block;   // keys of one block, block_size × head_dim
  std::vector<float> vblock;            // values of one block, block_size × head_dim
  std::vector<float> run_max, run_sum;  // per query vector (scalar) or lane (SIMD)
  std::vector<float> qt;            // SIMD: head_dim × lanes (queries transposed, one per lane)
  std::vector<float> acc;           // SIMD: head_dim × lanes (output accumulators)
  std::vector<int32_t> lane_pos;    // SIMD: last position each lane attends to
  std::vector<int32_t> lane_start;  // SIMD: first position each lane attends to (its window)
  std::vector<float> qround;        // quantized K: the queries rounded as llama.cpp rounds them
  std::vector<uint8_t> qblocks;     // quantized K: one query vector in q8_0 blocks
};

// With a quantized K cache (q8_0, q4_0) the scores are taken against each query vector rounded
// to q8_0, as llama.cpp's CPU backend does (its dot products of quantized keys take q8_0
// queries), so the logits stay within its noise rather than drifting by the query's rounding.
//
// Attends the query heads of KV head `kv_head` for n_rows rows of ONE sequence (q and out are
// row-major with n_head × head_dim floats per row; pos[i] is row i's position) over positions
// 0..pos[i] (pos[i] - window + 1..pos[i] with a window), whose K/V live in
// block_table[p / block_size]; entries of blocks before every row's window are not read. The
// rows share each block read.
// Runs at kernels::active_simd_level().
void attend_rows(const KvCache& cache, int32_t layer, const AttentionShape& s, int32_t kv_head,
                 const float* q, const int32_t* pos, int32_t n_rows, const int32_t* block_table,
                 float* out, AttentionScratch& scratch);

// The same at an explicit level (clamped to what the CPU supports), for tests and benchmarks.
// Scalar is the reference; the SIMD levels agree with it to float rounding (their exp is a
// polynomial and their dots use FMA) and are batch invariant in the same way.
void attend_rows_at(kernels::SimdLevel level, const KvCache& cache, int32_t layer,
                    const AttentionShape& s, int32_t kv_head, const float* q, const int32_t* pos,
                    int32_t n_rows, const int32_t* block_table, float* out,
                    AttentionScratch& scratch);

}  // namespace baton::model
