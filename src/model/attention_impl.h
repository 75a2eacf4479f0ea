#pragma once
// Per-level attention kernels behind attend_rows_at (same contract as attend_rows).
#include <cmath>

#include "kernels/quantize.h"
#include "model/attention.h"

namespace baton::model::detail {

// e^x for x <= 0, the same steps at every SIMD level (so the levels give the same bits): x =
// n ln2 + r with |r| <= ln2 / 2 (ln2 split in two for an exact n ln2), e^r by a degree-7
// polynomial (Cephes expf coefficients, Horner from the highest), times 2^n. Below kExpFloor
// (where e^x is no longer a normal float) gives 0.
constexpr float kExpFloor = -87.3f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kExpPoly[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                              4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

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

// The query vector of (row i, head h) as the scores read it: itself, or for a quantized K cache
// its q8_0 rounding, written to tmp (head_dim floats).
inline const float* query_vector(const KvCache& cache, const float* q, int64_t row_stride,
                                 int32_t i, int32_t h, int32_t hd, float* tmp,
                                 std::vector<uint8_t>& blocks) {
  const float* qh = q + i * row_stride + static_cast<int64_t>(h) * hd;
  if (!kv_type_is_quantized(cache.k_type())) return qh;
  blocks.resize(kernels::kernel_row_bytes(gguf::TensorType::Q8_0, hd));
  kernels::quantize_row(gguf::TensorType::Q8_0, qh, blocks.data(), hd);
  kernels::dequantize_row(gguf::TensorType::Q8_0, blocks.data(), tmp, hd);
  return tmp;
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
