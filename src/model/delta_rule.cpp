// One token's delta-rule update of one value head, at the process's SIMD level. A prefill runs
// it once per token, head and DeltaNet layer (960 times a token on a Qwen3.5-35B-A3B shape), so
// it runs on the widest vectors the CPU has rather than on eight scalar lanes.
//
// Every level walks the rows of m (the columns of S) in order and, within a row, the same fixed
// lanes, so a head's bits depend only on its inputs and the level: a sequence's outputs stay
// bit-identical however its prompt is chunked and whatever shares the step. The levels differ
// from each other in the last bits (lane counts, fused multiply-adds).
#include <cmath>

#include "kernels/intrinsics.h"
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

// The lane operations of each level; delta_rule_simd.inc holds the one body both run. Every
// operation carries its level's target attribute: a template instantiated for AVX2 inside an
// AVX-512 function could be given AVX-512 encodings, which fault on an AVX2-only CPU.
#define DR_AVX2 __attribute__((target("avx2,fma")))
#define DR_AVX512 __attribute__((target("avx512f,avx2,fma")))
// Lane operations are forced inline: a call per vector operation would cost more than the update.
#define DR_AVX2_OP DR_AVX2 __attribute__((always_inline)) inline
#define DR_AVX512_OP DR_AVX512 __attribute__((always_inline)) inline

namespace avx2 {

struct V {
  static constexpr int kWidth = 8;
  using R = __m256;
  DR_AVX2_OP static R zero() { return _mm256_setzero_ps(); }
  DR_AVX2_OP static R set1(float x) { return _mm256_set1_ps(x); }
  DR_AVX2_OP static R load(const float* p) { return _mm256_loadu_ps(p); }
  DR_AVX2_OP static void store(float* p, R x) { _mm256_storeu_ps(p, x); }
  DR_AVX2_OP static R mul(R a, R b) { return _mm256_mul_ps(a, b); }
  DR_AVX2_OP static R fma(R a, R b, R c) { return _mm256_fmadd_ps(a, b, c); }
  DR_AVX2_OP static float sum(R x) {
    const __m128 lo = _mm256_castps256_ps128(x), hi = _mm256_extractf128_ps(x, 1);
    __m128 t = _mm_add_ps(lo, hi);
    t = _mm_add_ps(t, _mm_movehl_ps(t, t));
    t = _mm_add_ss(t, _mm_movehdup_ps(t));
    return _mm_cvtss_f32(t);
  }
};

#define DR_TARGET DR_AVX2
#include "model/delta_rule_simd.inc"
#undef DR_TARGET

}  // namespace avx2

namespace avx512 {

struct V {
  static constexpr int kWidth = 16;
  using R = __m512;
  DR_AVX512_OP static R zero() { return _mm512_setzero_ps(); }
  DR_AVX512_OP static R set1(float x) { return _mm512_set1_ps(x); }
  DR_AVX512_OP static R load(const float* p) { return _mm512_loadu_ps(p); }
  DR_AVX512_OP static void store(float* p, R x) { _mm512_storeu_ps(p, x); }
  DR_AVX512_OP static R mul(R a, R b) { return _mm512_mul_ps(a, b); }
  DR_AVX512_OP static R fma(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
  DR_AVX512_OP static float sum(R x) { return _mm512_reduce_add_ps(x); }
};

#define DR_TARGET DR_AVX512
#include "model/delta_rule_simd.inc"
#undef DR_TARGET

}  // namespace avx512

}  // namespace

void delta_rule_step_at(kernels::SimdLevel level, float* m, const float* q, const float* k,
                        const float* v, float g, float beta, float scale, int32_t head_dim,
                        float* o) {
  const float decay = std::exp(g);
  if (level > kernels::detected_simd_level()) level = kernels::detected_simd_level();
  if (level == kernels::SimdLevel::Avx512 && head_dim % 16 == 0) {
    return avx512::step(m, q, k, v, decay, beta, scale, head_dim, o);
  }
  // A head width the wide level does not divide runs at the next one, for every token alike.
  if (level >= kernels::SimdLevel::Avx2 && head_dim % 8 == 0) {
    return avx2::step(m, q, k, v, decay, beta, scale, head_dim, o);
  }
  step_scalar(m, q, k, v, decay, beta, scale, head_dim, o);
}

void delta_rule_step(float* m, const float* q, const float* k, const float* v, float g, float beta,
                     float scale, int32_t head_dim, float* o) {
  delta_rule_step_at(kernels::active_simd_level(), m, q, k, v, g, beta, scale, head_dim, o);
}

}  // namespace baton::model
