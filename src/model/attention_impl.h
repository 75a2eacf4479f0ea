#pragma once
// Per-level attention kernels behind attend_rows_at (same contract as attend_rows).
#include <cmath>

#include "model/attention.h"

namespace baton::model::detail {

// First position row position p attends to under the shape's window.
inline int32_t window_start(const AttentionShape& s, int32_t p) {
  return s.window > 0 && p >= s.window ? p - s.window + 1 : 0;
}

// The factor a query's accumulated output is multiplied by once every block is in: 1 over the
// sum l of its numerators (taken relative to its running max m), with head's sink logit, if
// any, joining that sum as one more term (the output rescaled when the sink exceeds m).
inline float finish_scale(float m, float l, const float* sinks, int32_t head) {
  if (sinks == nullptr) return 1.0f / l;
  const float sk = sinks[head];
  if (sk > m) {
    const float ms = std::exp(m - sk);
    return ms / (l * ms + 1.0f);
  }
  return 1.0f / (l + std::exp(sk - m));
}

void attend_rows_scalar(const KvCache& cache, int32_t layer, const AttentionShape& s,
                        int32_t kv_head, const float* q, const int32_t* pos, int32_t n_rows,
                        const int32_t* block_table, float* out, AttentionScratch& scratch);
void attend_rows_avx2(const KvCache& cache, int32_t layer, const AttentionShape& s, int32_t kv_head,
                      const float* q, const int32_t* pos, int32_t n_rows,
                      const int32_t* block_table, float* out, AttentionScratch& scratch);
void attend_rows_avx512(const KvCache& cache, int32_t layer, const AttentionShape& s,
                        int32_t kv_head, const float* q, const int32_t* pos, int32_t n_rows,
                        const int32_t* block_table, float* out, AttentionScratch& scratch);

}  // namespace baton::model::detail
