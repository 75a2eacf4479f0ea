#pragma once
// AVX-512 weight loaders of Q4_1 Q5_0 IQ4_NL Q2_K Q3_K Q5_K IQ4_XS MXFP4 (included by
// matmul_avx512.cpp only, after avx512_loaders.h). Each yields exactly the values and scales of
// unpack_row (quant_block32_read.cpp, quant_superblock_read.cpp): the per-super-block scale tables
// are computed by the same scalar expressions, and only the int8 levels are decoded with vector
// instructions.
#include "kernels/avx512_loaders.h"

namespace baton::kernels::avx512 {

// Row i's value v in the layout column() reads.
inline void put(float (*t)[16], int row, int v, float value) {
  t[v & 3][4 * (v >> 2) + row] = value;
}

// Lanes 4i, 4i+1: a[i], b[i]; zero elsewhere (per-half offsets of 4 rows).
BATON_AVX512_INLINE __m512 interleave_pairs(__m128 a, __m128 b) {
  const __m512i idx = _mm512_setr_epi32(0, 4, 0, 0, 1, 5, 0, 0, 2, 6, 0, 0, 3, 7, 0, 0);
  const __m512 ab = _mm512_insertf32x4(_mm512_castps128_ps512(a), b, 1);
  return _mm512_maskz_permutexvar_ps(0x3333, idx, ab);
}

// Nibbles of 16 bytes per row: lo = low nibbles (elements 0..15), hi = high (16..31).
BATON_AVX512_INLINE void nibbles(__m512i n, __m512i& lo, __m512i& hi) {
  const __m512i m4 = _mm512_set1_epi8(0x0F);
  lo = _mm512_and_si512(n, m4);
  hi = _mm512_and_si512(_mm512_srli_epi16(n, 4), m4);
}

// The IQ4 values + 128, as unsigned bytes.
BATON_AVX512_INLINE __m512i iq4_table() {
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4NLValues));
  return _mm512_broadcast_i32x4(_mm_xor_si128(t, _mm_set1_epi8(char(0x80))));
}

// 16 where bit `bit` of byte l of h is set, else 0.
BATON_AVX512_INLINE __m512i bit_to_16(__m512i h, int bit) {
  const __mmask64 k = _mm512_test_epi8_mask(h, _mm512_set1_epi8(char(1 << bit)));
  return _mm512_maskz_mov_epi8(k, _mm512_set1_epi8(16));
}

struct LoaderQ4_1 : LoaderRows {
  static constexpr bool kSplit = false, kOffset = true, kHalfOffset = false;
  static constexpr int kBias = 0;   // levels are unsigned already
  static constexpr int kGroup = 1;  // blocks per load() group (j = 0..kGroup-1)
  BATON_AVX512_INLINE void load(int64_t b, int, Quad& q) {
    const int64_t o = b * int64_t(sizeof(BlockQ4_1));
    nibbles(gather16(rows, o + offsetof(BlockQ4_1, qs)), q.lo, q.hi);
    q.slo = spread4(f16x4(rows, o));
    q.off = spread4_first(f16x4(rows, o + offsetof(BlockQ4_1, m)));
  }
};

struct LoaderQ5_0 : LoaderRows {
  static constexpr bool kSplit = false, kOffset = false, kHalfOffset = false;
  static constexpr int kBias = 16;  // the level is q + 16
  static constexpr int kGroup = 1;  // blocks per load() group (j = 0..kGroup-1)
  BATON_AVX512_INLINE void load(int64_t b, int, Quad& q) {
    const int64_t o = b * int64_t(sizeof(BlockQ5_0));
    __m512i lo, hi;
    nibbles(gather16(rows, o + offsetof(BlockQ5_0, qs)), lo, hi);
    // Row i's 32 high bits in each dword of lane i; byte l of lane i then takes qh byte l / 8
    // (low half) or 2 + l / 8 (high half) and tests bit l % 8.
    uint32_t h[4];
    for (int i = 0; i < 4; ++i) std::memcpy(&h[i], rows[i] + o + offsetof(BlockQ5_0, qh), 4);
    const __m512i hv = _mm512_permutexvar_epi32(
        _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3),
        _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(h))));
    const __m512i sel_lo =
        _mm512_broadcast_i32x4(_mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1));
    const __m512i sel_hi =
        _mm512_broadcast_i32x4(_mm_setr_epi8(2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m512i bits = _mm512_broadcast_i32x4(
        _mm_setr_epi8(1, 2, 4, 8, 16, 32, 64, char(128), 1, 2, 4, 8, 16, 32, 64, char(128)));
    const __m512i sixteen = _mm512_set1_epi8(16);
    const __mmask64 klo = _mm512_test_epi8_mask(_mm512_shuffle_epi8(hv, sel_lo), bits);
    const __mmask64 khi = _mm512_test_epi8_mask(_mm512_shuffle_epi8(hv, sel_hi), bits);
    q.lo = _mm512_or_si512(lo, _mm512_maskz_mov_epi8(klo, sixteen));
    q.hi = _mm512_or_si512(hi, _mm512_maskz_mov_epi8(khi, sixteen));
    q.slo = spread4(f16x4(rows, o));
  }
};

struct LoaderIQ4_NL : LoaderRows {
  static constexpr bool kSplit = false, kOffset = false, kHalfOffset = false;
  static constexpr int kBias = 128;  // table value + 128
  static constexpr int kGroup = 1;   // blocks per load() group (j = 0..kGroup-1)
  BATON_AVX512_INLINE void load(int64_t b, int, Quad& q) {
    const int64_t o = b * int64_t(sizeof(BlockIQ4_NL));
    __m512i lo, hi;
    nibbles(gather16(rows, o + offsetof(BlockIQ4_NL, qs)), lo, hi);
    const __m512i t = iq4_table();
    q.lo = _mm512_shuffle_epi8(t, lo);
    q.hi = _mm512_shuffle_epi8(t, hi);
    q.slo = spread4(f16x4(rows, o));
  }
};

// The MXFP4 values + 128, as unsigned bytes.
BATON_AVX512_INLINE __m512i mxfp4_table() {
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kMXFP4Values));
  return _mm512_broadcast_i32x4(_mm_xor_si128(t, _mm_set1_epi8(char(0x80))));
}

struct LoaderMXFP4 : LoaderRows {
  static constexpr bool kSplit = false, kOffset = false, kHalfOffset = false;
  static constexpr int kBias = 128;  // table value + 128
  static constexpr int kGroup = 1;   // blocks per load() group (j = 0..kGroup-1)
  BATON_AVX512_INLINE void load(int64_t b, int, Quad& q) {
    const int64_t o = b * int64_t(sizeof(BlockMXFP4));
    __m512i lo, hi;
    nibbles(gather16(rows, o + offsetof(BlockMXFP4, qs)), lo, hi);
    const __m512i t = mxfp4_table();
    q.lo = _mm512_shuffle_epi8(t, lo);
    q.hi = _mm512_shuffle_epi8(t, hi);
    q.slo = spread4(_mm_setr_ps(e8m0_half(rows[0][o]), e8m0_half(rows[1][o]), e8m0_half(rows[2][o]),
                                e8m0_half(rows[3][o])));
  }
};

struct LoaderIQ4_XS : LoaderRows {
  static constexpr bool kSplit = false, kOffset = false, kHalfOffset = false;
  static constexpr int kBias = 128;  // table value + 128
  static constexpr int kGroup = 8;   // blocks per load() group (j = 0..kGroup-1)
  alignas(64) float table[4][16];    // value j (0..7): d * (ls - 32) of block j
  BATON_AVX512_INLINE void load(int64_t sb, int j, Quad& q) {
    const int64_t base = sb * int64_t(sizeof(BlockIQ4_XS));
    if (j == 0) {
      for (int i = 0; i < 4; ++i) {
        const auto& blk = *reinterpret_cast<const BlockIQ4_XS*>(rows[i] + base);
        const float d = fp16_to_fp32(blk.d);
        for (int v = 0; v < 8; ++v) put(table, i, v, d * float(iq4xs_scale(v, blk) - 32));
      }
    }
    __m512i lo, hi;
    nibbles(gather16(rows, base + offsetof(BlockIQ4_XS, qs) + 16 * j), lo, hi);
    const __m512i t = iq4_table();
    q.lo = _mm512_shuffle_epi8(t, lo);
    q.hi = _mm512_shuffle_epi8(t, hi);
    q.slo = spread4(column(table, int(j)));
  }
};

struct LoaderQ5_K : LoaderRows {
  static constexpr bool kSplit = false, kOffset = true, kHalfOffset = false;
  static constexpr int kBias = 0;   // levels are unsigned already
  static constexpr int kGroup = 8;  // blocks per load() group (j = 0..kGroup-1)
  alignas(64) float table[4][16];   // values 0..7: d * sc of block v; 8..15: -dmin * m
  BATON_AVX512_INLINE void load(int64_t sb, int j, Quad& q) {
    const int64_t base = sb * int64_t(sizeof(BlockQ5_K));
    if (j == 0) {
      for (int i = 0; i < 4; ++i) {
        const auto& blk = *reinterpret_cast<const BlockQ5_K*>(rows[i] + base);
        const float d = fp16_to_fp32(blk.d), dmin = fp16_to_fp32(blk.dmin);
        for (int v = 0; v < 8; ++v) {
          uint8_t sc, m;
          q4k_scale_min(v, blk.scales, &sc, &m);
          put(table, i, v, d * float(sc));
          put(table, i, v + 8, -(dmin * float(m)));
        }
      }
    }
    __m512i nlo, nhi, hlo, hhi;
    split_rows(rows, base + offsetof(BlockQ5_K, qs) + 32 * (j / 2), nlo, nhi);
    split_rows(rows, base + offsetof(BlockQ5_K, qh), hlo, hhi);
    if (j & 1) {
      nlo = _mm512_srli_epi16(nlo, 4);
      nhi = _mm512_srli_epi16(nhi, 4);
    }
    const __m512i m4 = _mm512_set1_epi8(0x0F);
    q.lo = _mm512_or_si512(_mm512_and_si512(nlo, m4), bit_to_16(hlo, int(j)));
    q.hi = _mm512_or_si512(_mm512_and_si512(nhi, m4), bit_to_16(hhi, int(j)));
    q.slo = spread4(column(table, int(j)));
    q.off = spread4_first(column(table, int(j) + 8));
  }
};

// 2-bit fields at shift 2 * (j % 4) of the 32 bytes qs[32 * (j / 4) ..] of 4 rows (Q2_K, Q3_K).
BATON_AVX512_INLINE void k2_fields(const uint8_t* const rows[4], int64_t qs_offset, int64_t j,
                                   __m512i& lo, __m512i& hi) {
  split_rows(rows, qs_offset + 32 * (j / 4), lo, hi);
  const __m128i shift = _mm_cvtsi32_si128(int(2 * (j % 4)));
  const __m512i m2 = _mm512_set1_epi8(3);
  lo = _mm512_and_si512(_mm512_srl_epi16(lo, shift), m2);
  hi = _mm512_and_si512(_mm512_srl_epi16(hi, shift), m2);
}

struct LoaderQ3_K : LoaderRows {
  static constexpr bool kSplit = true, kOffset = false, kHalfOffset = false;
  static constexpr int kBias = 4;   // the level is q + 4
  static constexpr int kGroup = 8;  // blocks per load() group (j = 0..kGroup-1)
  alignas(64) float table[4][16];   // value v: d * (sc - 32) of 16-element sub-block v
  BATON_AVX512_INLINE void load(int64_t sb, int j, Quad& q) {
    const int64_t base = sb * int64_t(sizeof(BlockQ3_K));
    if (j == 0) {
      for (int i = 0; i < 4; ++i) {
        const auto& blk = *reinterpret_cast<const BlockQ3_K*>(rows[i] + base);
        const float d = fp16_to_fp32(blk.d);
        for (int v = 0; v < 16; ++v) put(table, i, v, d * float(q3k_scale(v, blk.scales) - 32));
      }
    }
    __m512i lo, hi, hlo, hhi;
    k2_fields(rows, base + offsetof(BlockQ3_K, qs), j, lo, hi);
    split_rows(rows, base + offsetof(BlockQ3_K, hmask), hlo, hhi);
    // Level + 4 where the high bit is set (q = level - 4 where it is clear).
    const __m512i four = _mm512_set1_epi8(4), bit = _mm512_set1_epi8(char(1 << j));
    q.lo = _mm512_or_si512(lo, _mm512_maskz_mov_epi8(_mm512_test_epi8_mask(hlo, bit), four));
    q.hi = _mm512_or_si512(hi, _mm512_maskz_mov_epi8(_mm512_test_epi8_mask(hhi, bit), four));
    q.slo = spread4(column(table, int(2 * j)));
    q.shi = spread4(column(table, int(2 * j + 1)));
  }
};

struct LoaderQ2_K : LoaderRows {
  static constexpr bool kSplit = true, kOffset = false, kHalfOffset = true;
  static constexpr int kBias = 0;   // levels are unsigned already
  static constexpr int kGroup = 8;  // blocks per load() group (j = 0..kGroup-1)
  alignas(64) float scale[4][16];   // value v: d * sc of 16-element sub-block v
  alignas(64) float off[4][16];     // value v: -dmin * m of sub-block v
  BATON_AVX512_INLINE void load(int64_t sb, int j, Quad& q) {
    const int64_t base = sb * int64_t(sizeof(BlockQ2_K));
    if (j == 0) {
      for (int i = 0; i < 4; ++i) {
        const auto& blk = *reinterpret_cast<const BlockQ2_K*>(rows[i] + base);
        const float d = fp16_to_fp32(blk.d), dmin = fp16_to_fp32(blk.dmin);
        for (int v = 0; v < 16; ++v) {
          put(scale, i, v, d * float(blk.scales[v] & 0xF));
          put(off, i, v, -(dmin * float(blk.scales[v] >> 4)));
        }
      }
    }
    k2_fields(rows, base + offsetof(BlockQ2_K, qs), j, q.lo, q.hi);
    q.slo = spread4(column(scale, int(2 * j)));
    q.shi = spread4(column(scale, int(2 * j + 1)));
    q.off = interleave_pairs(column(off, int(2 * j)), column(off, int(2 * j + 1)));
  }
};

}  // namespace baton::kernels::avx512
