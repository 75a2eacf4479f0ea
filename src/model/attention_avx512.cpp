// AVX-512 attention: 16 query vectors per register (see attention_simd.inc for the scheme).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>

#include "kernels/intrinsics.h"
#include "model/attention_impl.h"

#define ATT_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")))
#define ATT_FN \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c"), always_inline)) inline
#define ATT_ENTRY attend_rows_avx512

namespace baton::model {
namespace {

using detail::kExpFloor;
using detail::kExpPoly;
using detail::kLn2Hi;
using detail::kLn2Lo;
using detail::kLog2e;

struct V {
  static constexpr int kWidth = 16;
  static constexpr int kKeyTile = 16;  // 16 score chains + the query register
  static constexpr int kDimTile = 16;
  static constexpr int kPairTile = 8;  // keys or dims per step of a pair of chunks: 16 chains
  using R = __m512;
  using I = __m512i;
  using M = __mmask16;

  ATT_FN static R zero() { return _mm512_setzero_ps(); }
  ATT_FN static R set1(float x) { return _mm512_set1_ps(x); }
  ATT_FN static R load(const float* p) { return _mm512_loadu_ps(p); }
  ATT_FN static void store(float* p, R v) { _mm512_storeu_ps(p, v); }
  ATT_FN static R load_half(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  ATT_FN static I load_int(const int32_t* p) { return _mm512_loadu_si512(p); }
  // kWidth signed bytes as floats (q8_0 levels).
  ATT_FN static R load_i8(const int8_t* p) {
    return _mm512_cvtepi32_ps(
        _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  // The low (or high) nibbles of kWidth bytes, less 8, as floats (q4_0 levels).
  ATT_FN static R load_nibbles(const uint8_t* p, bool high) {
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    if (high) b = _mm_srli_epi16(b, 4);
    b = _mm_and_si128(b, _mm_set1_epi8(0x0F));
    return _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_cvtepu8_epi32(b), _mm512_set1_epi32(8)));
  }
  ATT_FN static R fma(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
  ATT_FN static R mul(R a, R b) { return _mm512_mul_ps(a, b); }
  ATT_FN static R add(R a, R b) { return _mm512_add_ps(a, b); }
  ATT_FN static R sub(R a, R b) { return _mm512_sub_ps(a, b); }
  ATT_FN static R div(R a, R b) { return _mm512_div_ps(a, b); }
  ATT_FN static R max(R a, R b) { return _mm512_max_ps(a, b); }
  // Lanes that attend to position p: start <= p <= their own position.
  ATT_FN static M valid(I lane_start, I lane_pos, int32_t p) {
    const __m512i vp = _mm512_set1_epi32(p);
    return _mm512_mask_cmple_epi32_mask(_mm512_cmple_epi32_mask(lane_start, vp), vp, lane_pos);
  }
  ATT_FN static R select(M m, R yes, R no) { return _mm512_mask_blend_ps(m, no, yes); }
  ATT_FN static R mask_fma(M m, R a, R b, R c) { return _mm512_mask3_fmadd_ps(a, b, c, m); }

  // e^x for x <= 0 (the steps of attention_impl.h).
  ATT_FN static R exp(R x) {
    const M under = _mm512_cmp_ps_mask(x, set1(kExpFloor), _CMP_LT_OQ);
    x = _mm512_max_ps(set1(kExpFloor), x);  // NaN stays NaN: max returns its second operand
    const R n =
        _mm512_roundscale_ps(mul(x, set1(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    R r = _mm512_fnmadd_ps(n, set1(kLn2Hi), x);
    r = _mm512_fnmadd_ps(n, set1(kLn2Lo), r);
    R p = set1(kExpPoly[0]);
    for (size_t i = 1; i < std::size(kExpPoly); ++i) p = fma(p, r, set1(kExpPoly[i]));
    const R y = add(fma(p, mul(r, r), r), set1(1.0f));
    const I bits =
        _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    return _mm512_maskz_mul_ps(static_cast<M>(~under), y, _mm512_castsi512_ps(bits));
  }
};

}  // namespace

#include "model/attention_simd.inc"

}  // namespace baton::model
