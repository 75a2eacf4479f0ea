// One token's delta-rule update of one value head, at the process's SIMD level. A prefill runs
// it once per token, head and DeltaNet layer (960 times a token on a Qwen3.5-35B-A3B shape), so
// it runs on the widest vectors the CPU has rather than on eight scalar lanes.
//
// Every level walks the rows of m (the columns of S) in order and, within a row, the same fixed
// lanes, so a head's bits depend only on its inputs and the level: a sequence's outputs stay
// bit-identical however its prompt is chunked and whatever shares the step. The levels differ
// from each other in the last bits (lane counts, fused multiply-adds).
// GCC 12's AVX-512 headers seed results with _mm512_undefined_*(), which the uninitialized
// warnings then report at every inlined use (as in attention_avx512.cpp).
#ifndef __clang__  // a GCC-only warning group
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <cmath>

#include "kernels/simd.h"
#include "model/delta_net.h"
#include "model/ops.h"

namespace baton::model {
namespace {

void step_scalar(float* m, const float* q, const float* k, const float* v, float decay, float beta,
                 float scale, int32_t head_dim, float* o) {
  for (int32_t j = 0; j < head_dim; ++j) {
    float* row = m + static_cast<int64_t>(j) * head_dim;
    for (int32_t i = 0; i < head_dim; ++i) row[i] *= decay;
    const float delta = (v[j] - fixed_order_dot(row, k, head_dim)) * beta;
    for (int32_t i = 0; i < head_dim; ++i) row[i] += k[i] * delta;
    o[j] = fixed_order_dot(row, q, head_dim) * scale;
  }
}

#define DR_AVX2 __attribute__((target("avx2,fma")))
#define DR_AVX512 __attribute__((target("avx512f,avx2,fma")))

DR_AVX2 float sum8(__m256 v) {
  const __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
  __m128 s = _mm_add_ps(lo, hi);
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Row by row: decay it while taking S^T k, then add k * delta while taking S^T q. A row of 128
// floats stays in L1 between its two passes.
DR_AVX2 void step_avx2(float* m, const float* q, const float* k, const float* v, float decay,
                       float beta, float scale, int32_t head_dim, float* o) {
  const __m256 dv = _mm256_set1_ps(decay);
  for (int32_t j = 0; j < head_dim; ++j) {
    float* row = m + static_cast<int64_t>(j) * head_dim;
    __m256 acc = _mm256_setzero_ps();
    for (int32_t i = 0; i < head_dim; i += 8) {
      const __m256 r = _mm256_mul_ps(_mm256_loadu_ps(row + i), dv);
      _mm256_storeu_ps(row + i, r);
      acc = _mm256_fmadd_ps(r, _mm256_loadu_ps(k + i), acc);
    }
    const __m256 delta = _mm256_set1_ps((v[j] - sum8(acc)) * beta);
    acc = _mm256_setzero_ps();
    for (int32_t i = 0; i < head_dim; i += 8) {
      const __m256 r = _mm256_fmadd_ps(_mm256_loadu_ps(k + i), delta, _mm256_loadu_ps(row + i));
      _mm256_storeu_ps(row + i, r);
      acc = _mm256_fmadd_ps(r, _mm256_loadu_ps(q + i), acc);
    }
    o[j] = sum8(acc) * scale;
  }
}

DR_AVX512 void step_avx512(float* m, const float* q, const float* k, const float* v, float decay,
                           float beta, float scale, int32_t head_dim, float* o) {
  const __m512 dv = _mm512_set1_ps(decay);
  for (int32_t j = 0; j < head_dim; ++j) {
    float* row = m + static_cast<int64_t>(j) * head_dim;
    __m512 acc = _mm512_setzero_ps();
    for (int32_t i = 0; i < head_dim; i += 16) {
      const __m512 r = _mm512_mul_ps(_mm512_loadu_ps(row + i), dv);
      _mm512_storeu_ps(row + i, r);
      acc = _mm512_fmadd_ps(r, _mm512_loadu_ps(k + i), acc);
    }
    const __m512 delta = _mm512_set1_ps((v[j] - _mm512_reduce_add_ps(acc)) * beta);
    acc = _mm512_setzero_ps();
    for (int32_t i = 0; i < head_dim; i += 16) {
      const __m512 r = _mm512_fmadd_ps(_mm512_loadu_ps(k + i), delta, _mm512_loadu_ps(row + i));
      _mm512_storeu_ps(row + i, r);
      acc = _mm512_fmadd_ps(r, _mm512_loadu_ps(q + i), acc);
    }
    o[j] = _mm512_reduce_add_ps(acc) * scale;
  }
}

}  // namespace

void delta_rule_step_at(kernels::SimdLevel level, float* m, const float* q, const float* k,
                        const float* v, float g, float beta, float scale, int32_t head_dim,
                        float* o) {
  const float decay = std::exp(g);
  if (level > kernels::detected_simd_level()) level = kernels::detected_simd_level();
  if (level == kernels::SimdLevel::Avx512 && head_dim % 16 == 0) {
    return step_avx512(m, q, k, v, decay, beta, scale, head_dim, o);
  }
  // A head width the wide level does not divide runs at the next one, for every token alike.
  if (level >= kernels::SimdLevel::Avx2 && head_dim % 8 == 0) {
    return step_avx2(m, q, k, v, decay, beta, scale, head_dim, o);
  }
  step_scalar(m, q, k, v, decay, beta, scale, head_dim, o);
}

void delta_rule_step(float* m, const float* q, const float* k, const float* v, float g, float beta,
                     float scale, int32_t head_dim, float* o) {
  delta_rule_step_at(kernels::active_simd_level(), m, q, k, v, g, beta, scale, head_dim, o);
}

}  // namespace baton::model
