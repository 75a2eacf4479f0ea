#pragma once
// Per-level attention kernels behind attend_rows_at (same contract as attend_rows).
#include "model/attention.h"

namespace baton::model::detail {

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
