#pragma once
// Weight loaders of the AVX-512 quantized kernel (included by matmul_avx512.cpp only): each
// turns block b of 4 weight rows into lane form, the common shape of matmul_impl.h.
#include <cstddef>
#include <cstring>

#include "kernels/blocks.h"
#include "kernels/fp16.h"
#include "kernels/intrinsics.h"

#define BATON_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))
#define BATON_AVX512_INLINE                                                    \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c"), \
                 always_inline)) inline

namespace baton::kernels::avx512 {

// One block of a 4-row tile in lane form.
struct Quad {
  __m512i lo, hi;   // weights as unsigned bytes: level + the loader's kBias
  __m512 slo, shi;  // scale of row i in lanes 4i..4i+3
  __m512 off;       // offset of row i in lane 4i, zero elsewhere; with per-half offsets
                    // (kHalfOffset), the high half's in lane 4i + 1
};

// Rows i of lo/hi from 32 contiguous bytes at p[i].
BATON_AVX512_INLINE void split_rows(const uint8_t* const p[4], int64_t offset, __m512i& lo,
                                    __m512i& hi) {
#define BATON_LD(i) _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p[i] + offset))
  const __m512i a = _mm512_inserti64x4(_mm512_castsi256_si512(BATON_LD(0)), BATON_LD(1), 1);
  const __m512i c = _mm512_inserti64x4(_mm512_castsi256_si512(BATON_LD(2)), BATON_LD(3), 1);
#undef BATON_LD
  lo = _mm512_shuffle_i64x2(a, c, _MM_SHUFFLE(2, 0, 2, 0));
  hi = _mm512_shuffle_i64x2(a, c, _MM_SHUFFLE(3, 1, 3, 1));
}

// Rows i from 16 contiguous bytes at p[i].
BATON_AVX512_INLINE __m512i gather16(const uint8_t* const p[4], int64_t offset) {
#define BATON_LD(i) _mm_loadu_si128(reinterpret_cast<const __m128i*>(p[i] + offset))
  const __m256i a = _mm256_inserti128_si256(_mm256_castsi128_si256(BATON_LD(0)), BATON_LD(1), 1);
  const __m256i c = _mm256_inserti128_si256(_mm256_castsi128_si256(BATON_LD(2)), BATON_LD(3), 1);
#undef BATON_LD
  return _mm512_inserti64x4(_mm512_castsi256_si512(a), c, 1);
}

// Lanes 4i..4i+3 all take lane i (one value per row of a 4-row tile).
BATON_AVX512_INLINE __m512i spread4_index() {
  return _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
}

// [v0 v0 v0 v0 v1 v1 v1 v1 ...]
BATON_AVX512_INLINE __m512 spread4(__m128 v) {
  return _mm512_permutexvar_ps(spread4_index(), _mm512_castps128_ps512(v));
}

// The same in lane 4i only, zero elsewhere (offsets, which one lane per row carries).
BATON_AVX512_INLINE __m512 spread4_first(__m128 v) {
  return _mm512_maskz_permutexvar_ps(0x1111, spread4_index(), _mm512_castps128_ps512(v));
}

BATON_AVX512_INLINE __m128 f16x4(const uint8_t* const p[4], int64_t offset) {
  uint16_t h[4];
  for (int i = 0; i < 4; ++i) std::memcpy(&h[i], p[i] + offset, 2);
  return _mm_cvtph_ps(
      _mm_setr_epi16(short(h[0]), short(h[1]), short(h[2]), short(h[3]), 0, 0, 0, 0));
}

// 16 values of each of 4 rows (r_i) into a table where value v of row i is at
// t[v % 4][4 * (v / 4) + i], so that column() loads the 4 rows' value v as one __m128.
BATON_AVX512_INLINE void transpose_4x16(__m512 r0, __m512 r1, __m512 r2, __m512 r3,
                                        float (*t)[16]) {
  const __m512 t0 = _mm512_unpacklo_ps(r0, r1), t1 = _mm512_unpackhi_ps(r0, r1);
  const __m512 t2 = _mm512_unpacklo_ps(r2, r3), t3 = _mm512_unpackhi_ps(r2, r3);
  // (Macros, not lambdas: a lambda does not inherit the target attribute.)
#define BATON_PAIRS(op, a, b) _mm512_castpd_ps(op(_mm512_castps_pd(a), _mm512_castps_pd(b)))
  _mm512_store_ps(t[0], BATON_PAIRS(_mm512_unpacklo_pd, t0, t2));
  _mm512_store_ps(t[1], BATON_PAIRS(_mm512_unpackhi_pd, t0, t2));
  _mm512_store_ps(t[2], BATON_PAIRS(_mm512_unpacklo_pd, t1, t3));
  _mm512_store_ps(t[3], BATON_PAIRS(_mm512_unpackhi_pd, t1, t3));
#undef BATON_PAIRS
}

BATON_AVX512_INLINE __m128 column(const float (*t)[16], int v) {
  return _mm_load_ps(&t[v & 3][4 * (v >> 2)]);
}

// The 4 weight rows a loader reads, in the file's layout (each row's blocks contiguous).
struct LoaderRows {
  const uint8_t* const* rows = nullptr;
};

struct LoaderQ8_0 : LoaderRows {
  static constexpr bool kSplit = false, kOffset = false, kHalfOffset = false;
  static constexpr int kBias = 128;
  static constexpr int kGroup = 1;  // blocks per load() group (j = 0..kGroup-1)
  BATON_AVX512_INLINE void load(int64_t b, int, Quad& q) {
    const int64_t o = b * int64_t(sizeof(BlockQ8_0));
    split_rows(rows, o + 2, q.lo, q.hi);
    const __m512i flip = _mm512_set1_epi8(char(0x80));  // int8 + 128 as uint8
    q.lo = _mm512_xor_si512(q.lo, flip);
    q.hi = _mm512_xor_si512(q.hi, flip);
    q.slo = spread4(f16x4(rows, o));
  }
};

struct LoaderQ4_0 : LoaderRows {
  static constexpr bool kSplit = false, kOffset = false, kHalfOffset = false;
  static constexpr int kBias = 8;   // the level is q + 8
  static constexpr int kGroup = 1;  // blocks per load() group (j = 0..kGroup-1)
  BATON_AVX512_INLINE void load(int64_t b, int, Quad& q) {
    const int64_t o = b * int64_t(sizeof(BlockQ4_0));
    const __m512i n = gather16(rows, o + 2);
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    q.lo = _mm512_and_si512(n, m4);
    q.hi = _mm512_and_si512(_mm512_srli_epi16(n, 4), m4);
    q.slo = spread4(f16x4(rows, o));
  }
};

struct LoaderQ4_K : LoaderRows {
  static constexpr bool kSplit = false, kOffset = true, kHalfOffset = false;
  static constexpr int kBias = 8;   // the level is q + 8
  static constexpr int kGroup = 8;  // blocks per load() group (j = 0..kGroup-1)
  // Values 0..7: d * sc of sub-block v; 8..15: 8 * (d * sc) - dmin * m of sub-block v - 8.
  alignas(64) float table[4][16];
  __m512i pair_lo, pair_hi;
  BATON_AVX512_INLINE void load(int64_t sb, int j, Quad& q) {
    const int64_t base = sb * int64_t(sizeof(BlockQ4_K));
    if (j == 0) prepare(base);
    // Sub-blocks 2m and 2m + 1 share 32 bytes (low and high nibbles): loaded once.
    __m512i nlo, nhi;
    if ((j & 1) == 0) {
      split_rows(rows, base + offsetof(BlockQ4_K, qs) + 32 * (j / 2), pair_lo, pair_hi);
      nlo = pair_lo;
      nhi = pair_hi;
    } else {
      nlo = _mm512_srli_epi16(pair_lo, 4);
      nhi = _mm512_srli_epi16(pair_hi, 4);
    }
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    q.lo = _mm512_and_si512(nlo, m4);
    q.hi = _mm512_and_si512(nhi, m4);
    q.slo = spread4(column(table, int(j)));
    q.off = spread4_first(column(table, int(j) + 8));
  }
  // One row's 16 table values. The 12 packed bytes hold scales and mins of sub-blocks 0..3 in
  // their low 6 bits (bytes 0..3, 4..7); bytes 8..11 hold the low 4 bits of sub-blocks 4..7
  // and bytes 0..7 lend them their top 2 bits.
  static BATON_AVX512_INLINE __m512 row_values(const BlockQ4_K* blk) {
    uint32_t w[3];
    std::memcpy(w, blk->scales, 12);
    const uint32_t sc_lo = w[0] & 0x3f3f3f3f, m_lo = w[1] & 0x3f3f3f3f;
    const uint32_t sc_hi = (w[2] & 0x0f0f0f0f) | (((w[0] >> 6) & 0x03030303) << 4);
    const uint32_t m_hi = ((w[2] >> 4) & 0x0f0f0f0f) | (((w[1] >> 6) & 0x03030303) << 4);
    const __m128i bytes = _mm_setr_epi32(int(sc_lo), int(sc_hi), int(m_lo), int(m_hi));
    const __m512 v = _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(bytes));
    const __m512 dd = _mm512_mask_blend_ps(0xFF00, _mm512_set1_ps(_cvtsh_ss(blk->d)),
                                           _mm512_set1_ps(_cvtsh_ss(blk->dmin)));
    const __m512 prod = _mm512_mul_ps(v, dd);  // [d*sc x8, dmin*m x8]
    const __m512 s2 = _mm512_shuffle_f32x4(prod, prod, _MM_SHUFFLE(1, 0, 1, 0));  // [d*sc, d*sc]
    return _mm512_mask_sub_ps(prod, 0xFF00, _mm512_mul_ps(s2, _mm512_set1_ps(8.0f)), prod);
  }
  BATON_AVX512_INLINE void prepare(int64_t base) {
    auto blk = [&](int i) { return reinterpret_cast<const BlockQ4_K*>(rows[i] + base); };
    transpose_4x16(row_values(blk(0)), row_values(blk(1)), row_values(blk(2)), row_values(blk(3)),
                   table);
  }
};

// 6-bit level (0..63) from its low nibble (in l) and its 2 high bits (at bit hs of h).
BATON_AVX512_INLINE __m512i q6_combine(__m512i l, __m512i h, __m128i hs) {
  const __m512i m4 = _mm512_set1_epi8(0x0F), m2 = _mm512_set1_epi8(3);
  const __m512i hb = _mm512_slli_epi16(_mm512_and_si512(_mm512_srl_epi16(h, hs), m2), 4);
  return _mm512_or_si512(_mm512_and_si512(l, m4), hb);
}

// The levels of 32-element block k (0..3) of a Q6_K half in lane form, from that half's ql
// chunks (ql[c]: bytes 32c.., lo and hi 16 each; block k takes chunk k % 2, high nibbles for
// k >= 2) and its qh bytes (bits 2k).
BATON_AVX512_INLINE void q6_levels(const __m512i ql[2][2], const __m512i qh[2], int k, Quad& q) {
  __m512i ql_lo = ql[k & 1][0], ql_hi = ql[k & 1][1];
  if (k >= 2) {
    ql_lo = _mm512_srli_epi16(ql_lo, 4);
    ql_hi = _mm512_srli_epi16(ql_hi, 4);
  }
  const __m128i hs = _mm_cvtsi32_si128(2 * k);
  q.lo = q6_combine(ql_lo, qh[0], hs);
  q.hi = q6_combine(ql_hi, qh[1], hs);
}

struct LoaderQ6_K : LoaderRows {
  static constexpr bool kSplit = true, kOffset = false, kHalfOffset = false;
  static constexpr int kBias = 32;  // the level is q + 32
  static constexpr int kGroup = 8;  // blocks per load() group (j = 0..kGroup-1)
  alignas(64) float table[4][16];   // value v: d * sc of 16-element sub-block v
  __m512i ql[2][2], qh[2];
  BATON_AVX512_INLINE void load(int64_t sb, int j, Quad& q) {
    const int n = j / 4, k = j % 4;
    const int64_t base = sb * int64_t(sizeof(BlockQ6_K));
    if (j == 0) prepare(base);
    // qh serves the 4 sub-blocks of a half, each ql chunk two of them: each is loaded once.
    if (k == 0) split_rows(rows, base + offsetof(BlockQ6_K, qh) + 32 * n, qh[0], qh[1]);
    if (k < 2) {
      split_rows(rows, base + offsetof(BlockQ6_K, ql) + 64 * n + 32 * k, ql[k][0], ql[k][1]);
    }
    q6_levels(ql, qh, k, q);
    q.slo = spread4(column(table, int(2 * j)));
    q.shi = spread4(column(table, int(2 * j + 1)));
  }
  static BATON_AVX512_INLINE __m512 row_values(const BlockQ6_K* blk) {
    const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk->scales));
    return _mm512_mul_ps(_mm512_set1_ps(_cvtsh_ss(blk->d)),
                         _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(sc)));
  }
  BATON_AVX512_INLINE void prepare(int64_t base) {
    auto blk = [&](int i) { return reinterpret_cast<const BlockQ6_K*>(rows[i] + base); };
    transpose_4x16(row_values(blk(0)), row_values(blk(1)), row_values(blk(2)), row_values(blk(3)),
                   table);
  }
};

}  // namespace baton::kernels::avx512
