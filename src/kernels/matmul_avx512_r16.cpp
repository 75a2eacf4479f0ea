// AVX-512 VNNI kernel for weights in the 16-row tile layout (kernels/tiles16.h). Lane r of every
// vector is weight row r of the tile: for each 32-element block, 8 vpdpbusd (one per 4-element
// quad, x's 4 bytes broadcast) leave row r's whole integer dot product in lane r, and one float
// step per block and x row applies the scales:
//   acc = fma(float(I), s * dx, acc)         s: the weight scale of the block (row r)
//   acc = fma(off, sx, acc)                  Q4_K, Q5_K: off = -(dmin * m), sx = dx * sum(xq)
//                                            (Q2_K: per 16-element half, after both halves' dots)
// where I starts at -B * sum(xq): Q8_0 stores levels + B (B = 128), and the levels of Q4_0,
// Q3_K, Q6_K, IQ4_NL, IQ4_XS and MXFP4 (a table's values + 128) are q + B; Q4_K's and Q5_K's are
// unsigned already (B = 0), as are Q2_K's. Q2_K, Q3_K and Q6_K have a scale per 16 elements: their
// two halves make two such steps, low half first. The same steps in the same order run for every
// (row, x row) pair whatever the batch, the tile's other rows and the threads, so results are
// batch-invariant.
#include <algorithm>
#include <cstring>

#include "kernels/avx512_loaders.h"
#include "kernels/avx512_loaders_extra.h"
#include "kernels/interleave.h"
#include "kernels/intrinsics.h"
#include "kernels/matmul_impl.h"
#include "kernels/quantize.h"
#include "kernels/tiles16.h"

namespace baton::kernels {
namespace {

constexpr int kMaxXRows = 8;
// Weights of one chunk of tiles stay in L2 while every x tile passes over them.
constexpr int64_t kChunkBytes = 384 * 1024;

// acc + the dot products of w's byte quads with x's 4 bytes at p (in every lane). GCC does not
// fold the broadcast into vpdpbusd's memory operand, and the separate vpbroadcastd was one
// instruction in five of the decode loop of the nibble types: the inline form names the embedded
// broadcast.
BATON_AVX512_INLINE __m512i dot_quad(__m512i acc, __m512i w, const uint8_t* p) {
#if defined(__GNUC__) && !defined(__clang__)
  using Quad = int32_t __attribute__((may_alias));  // x's bytes read in place, as 4 at once
  __asm__("vpdpbusd %[x]%{1to16%}, %[w], %[acc]"
          : [acc] "+v"(acc)
          : [w] "v"(w), [x] "m"(*reinterpret_cast<const Quad*>(p)));
  return acc;
#else
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm512_dpbusd_epi32(acc, w, _mm512_set1_epi32(v));
#endif
}

// v's bits moved from bit `from` to bit `to` of each byte (by a 16-bit shift: for the bits kept
// afterwards, within their own byte), and the levels whose low bits sit in lo (masked) joined
// with high bits h already in place.
BATON_AVX512_INLINE __m512i move_bits(__m512i v, int from, int to) {
  if (from < to) return _mm512_slli_epi16(v, unsigned(to - from));
  if (from > to) return _mm512_srli_epi16(v, unsigned(from - to));
  return v;
}
BATON_AVX512_INLINE __m512i join_levels(__m512i lo, uint8_t lo_mask, __m512i h) {
  return _mm512_ternarylogic_epi32(lo, h, _mm512_set1_epi8(char(lo_mask)), 0xEC);  // lo & m | h
}

// 16 int8 values at p times d (scales stored less their bias).
BATON_AVX512_INLINE __m512 int8_scales(__m512 d, const uint8_t* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(v)));
}

// 16 f16 values at p.
BATON_AVX512_INLINE __m512 f16x16(const uint8_t* p) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}

// The float factors of one block for the 16 rows: the weight scale (of quads 0..3 and 4..7 apart
// for kSplit types) and the offset (kOffset types; per half for kHalfOffset types).
struct Scales {
  __m512 lo, hi, off, off_hi;  // off_hi: the high half's offset (kHalfOffset types)
};

// The prefetch of the block-pair and four types (Q8_0, Q4_0, IQ4_NL, MXFP4, Q4_1, Q5_0). A tile's
// 16 rows sit a pair (four) apart per block, a stride the hardware prefetchers follow too late
// for a matvec: touching the lines of each block's linear share of its pair 16 blocks ahead made
// q8_0 matvec 5-25 % faster (kernels_bench, 2048x8192; more on a busy machine), Q4_0's and
// MXFP4's ~25 %, and gpt-oss decode ~20 % (bench engine, the MXFP4 synth file).
template <gguf::TensorType T>
struct PairPrefetch {
  static constexpr int64_t kBlockShare = tile16_shape(T).bytes / tile16_shape(T).blocks;
  static constexpr int kPrefetchLines = static_cast<int>((kBlockShare + 63) / 64);
  static constexpr int64_t kPrefetchAhead = 16 * kBlockShare;
  static const uint8_t* share_of(const uint8_t* tile, int64_t b) { return tile + kBlockShare * b; }
};

// The tile types. Each reads a group of kGroup blocks (a super-block of the K types) through a
// Group made once per group; block j of the group gives its Scales and its 8 quads in lane form.
struct Tiles16Q8_0 : PairPrefetch<gguf::TensorType::Q8_0> {
  static constexpr int kBias = 128;
  static constexpr bool kOffset = false, kHalfOffset = false, kSplit = false;
  static constexpr int kGroup = 1;
  static constexpr auto kType = gguf::TensorType::Q8_0;
  struct Group {
    const uint8_t* quants;
    const uint8_t* d;
    const uint8_t* meta;  // the block's share of its pair, for the prefetch
    BATON_AVX512_INLINE void scales(int, Scales& s) const { s.lo = f16x16(d); }
    BATON_AVX512_INLINE __m512i quad(int, int q) const {
      return _mm512_loadu_si512(quants + 64 * q);
    }
  };
  static BATON_AVX512_INLINE Group group(const uint8_t* tile, int64_t g) {
    return {tile + tile16_quants_at(kType, g), tile + tile16_scales_at(kType, g),
            share_of(tile, g)};
  }
};

// Q4_0 and IQ4_XS blocks: 4 quads of 64 B whose low nibbles are quads 0..3 and high nibbles
// quads 4..7.
BATON_AVX512_INLINE __m512i nibble_quad(const uint8_t* quants, int q) {
  __m512i v = _mm512_loadu_si512(quants + 64 * (q % 4));
  if (q >= 4) v = _mm512_srli_epi16(v, 4);
  return _mm512_and_si512(v, _mm512_set1_epi8(0x0F));
}

// 16 E8M0 exponent bytes at p as the MXFP4 scales 2^(e - 128): the bits e8m0_half builds.
BATON_AVX512_INLINE __m512 e8m0x16(const uint8_t* p) {
  const __m512i e = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
  const __m512i subnormal = _mm512_sllv_epi32(_mm512_set1_epi32(1 << 21), e);
  const __mmask16 small = _mm512_cmplt_epu32_mask(e, _mm512_set1_epi32(2));
  return _mm512_castsi512_ps(_mm512_mask_blend_epi32(small, normal, subnormal));
}

// Q4_0, IQ4_NL, MXFP4, Q4_1 and Q5_0: pairs (MXFP4: fours) of 32-element blocks (tiles16.h).
template <gguf::TensorType T>
struct Tiles16Pair : PairPrefetch<T> {
  static constexpr bool kMx = T == gguf::TensorType::MXFP4;             // kMXFP4Values, E8M0 scales
  static constexpr bool kTable = kMx || T == gguf::TensorType::IQ4_NL;  // levels from a table
  static constexpr bool kMin = T == gguf::TensorType::Q4_1;             // an offset m per block
  static constexpr bool kFifth = T == gguf::TensorType::Q5_0;           // a fifth bit per level
  // The level is q + kBias: Q4_0's nibble is q + 8, Q5_0's 5 bits q + 16, the table + 128.
  static constexpr int kBias = kTable ? 128 : kMin ? 0 : kFifth ? 16 : 8;
  static constexpr bool kOffset = kMin, kHalfOffset = false, kSplit = false;
  static constexpr int kGroup = 1;
  struct Group {
    const uint8_t* quants;
    const uint8_t* d;      // 16 f16 (MXFP4: 16 exponent bytes)
    const uint8_t* extra;  // Q4_1's 16 f16 m, Q5_0's fifth bits
    const uint8_t* meta;   // the block's share of its pair, for the prefetch
    BATON_AVX512_INLINE void scales(int, Scales& s) const {
      if constexpr (kMx) {
        s.lo = e8m0x16(d);
      } else {
        s.lo = f16x16(d);
      }
      if constexpr (kMin) s.off = f16x16(extra);
    }
    BATON_AVX512_INLINE __m512i quad(int, int q) const {
      const __m512i nibbles = nibble_quad(quants, q);
      if constexpr (kTable) {
        return _mm512_shuffle_epi8(kMx ? avx512::mxfp4_table() : avx512::iq4_table(), nibbles);
      }
      if constexpr (!kFifth) return nibbles;
      const __m512i h = move_bits(_mm512_loadu_si512(extra), q, 4);
      return join_levels(nibbles, 0x0F, _mm512_and_si512(h, _mm512_set1_epi8(0x10)));
    }
  };
  static BATON_AVX512_INLINE Group group(const uint8_t* tile, int64_t b) {
    return {tile + tile16_quants_at(T, b), tile + tile16_scales_at(T, b),
            tile + tile16_extra_at(T, b), PairPrefetch<T>::share_of(tile, b)};
  }
};
using Tiles16Q4_0 = Tiles16Pair<gguf::TensorType::Q4_0>;

struct Tiles16IQ4_XS {
  static constexpr auto kType = gguf::TensorType::IQ4_XS;
  static constexpr int kBias = 128;  // the table's values + 128
  static constexpr bool kOffset = false, kHalfOffset = false, kSplit = false;
  static constexpr int kGroup = 8;
  static constexpr int kPrefetchLines = 5;  // as Q4_K's
  static constexpr int64_t kPrefetchAhead = 2 * tile16_shape(kType).bytes;
  struct Group {
    const uint8_t* quants;
    const uint8_t* meta;  // d, then each block's scale less 32
    __m512 d;
    __m512i table;  // kIQ4NLValues + 128 in every 128-bit lane
    BATON_AVX512_INLINE void scales(int j, Scales& s) const {
      s.lo = int8_scales(d, meta + 32 + 16 * j);
    }
    BATON_AVX512_INLINE __m512i quad(int j, int q) const {
      return _mm512_shuffle_epi8(table, nibble_quad(quants + 256 * j, q));
    }
  };
  static BATON_AVX512_INLINE Group group(const uint8_t* tile, int64_t g) {
    const uint8_t* meta = tile + tile16_scales_at(kType, g);
    return {tile + tile16_quants_at(kType, g), meta, f16x16(meta), avx512::iq4_table()};
  }
};

// Q4_K, and Q5_K (kFive) whose fifth bits join the nibbles: the same scales and offsets.
template <bool kFive>
struct Tiles16Q4_5K {
  static constexpr auto kType = kFive ? gguf::TensorType::Q5_K : gguf::TensorType::Q4_K;
  static constexpr int kBias = 0;
  static constexpr bool kOffset = true, kHalfOffset = false, kSplit = false;
  static constexpr int kGroup = 8;
  // Decode spends 3x the instructions per byte of Q8_0 here, and the hardware prefetchers fall
  // behind: each block prefetches a few lines, two super-blocks ahead (+10 % decode, measured).
  static constexpr int kPrefetchLines = kFive ? 6 : 5;
  static constexpr int64_t kPrefetchAhead = 2 * tile16_shape(kType).bytes;
  // Q4_K's high nibbles enter vpdpbusd in place, as 16 x their level (no shift: one instruction
  // less per quad), and their scale carries the 1/16: 16 * I converts exactly (|16 I| < 2^24) and
  // the products are the same numbers, so the bits are those of the shifted form.
  static constexpr bool kHighInPlace = !kFive;
  struct Group {
    const uint8_t* quants;
    const uint8_t* meta;         // d, dmin, sc, mn (tiles16.h)
    __m512 d, neg_dmin, d_high;  // d_high: d / 16 for high nibbles in place, else d
    static BATON_AVX512_INLINE __m512 bytes(const uint8_t* p) {
      return _mm512_cvtepi32_ps(
          _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
    }
    BATON_AVX512_INLINE void scales(int j, Scales& s) const {
      s.lo = _mm512_mul_ps(j & 1 ? d_high : d, bytes(meta + 64 + 16 * j));
      s.off = _mm512_mul_ps(neg_dmin, bytes(meta + 192 + 16 * j));
    }
    // Sub-blocks 2m and 2m + 1 share pair m's bytes: low nibbles and high. Q5_K's bit j of
    // each fifth-bit byte goes to bit 4.
    BATON_AVX512_INLINE __m512i quad(int j, int q) const {
      const uint8_t* nibbles = kFive ? quants + 512 : quants;
      __m512i v = _mm512_loadu_si512(nibbles + 512 * (j / 2) + 64 * q);
      if constexpr (kHighInPlace) {
        return _mm512_and_si512(v, _mm512_set1_epi8(char(j & 1 ? 0xF0 : 0x0F)));
      }
      if (j & 1) v = _mm512_srli_epi16(v, 4);
      const __m512i h = move_bits(_mm512_loadu_si512(quants + 64 * q), j, 4);
      return join_levels(v, 0x0F, _mm512_and_si512(h, _mm512_set1_epi8(0x10)));
    }
  };
  static BATON_AVX512_INLINE Group group(const uint8_t* tile, int64_t g) {
    const uint8_t* meta = tile + tile16_scales_at(kType, g);
    const __m512 d = f16x16(meta);
    return {tile + tile16_quants_at(kType, g), meta, d,
            _mm512_sub_ps(_mm512_setzero_ps(), f16x16(meta + 32)),
            kHighInPlace ? _mm512_mul_ps(d, _mm512_set1_ps(1.0f / 16)) : d};
  }
};
using Tiles16Q4_K = Tiles16Q4_5K<false>;
using Tiles16Q5_K = Tiles16Q4_5K<true>;

struct Tiles16Q2_K {
  static constexpr auto kType = gguf::TensorType::Q2_K;
  static constexpr int kBias = 0;  // 2-bit levels, a min per 16 elements
  static constexpr bool kOffset = false, kHalfOffset = true, kSplit = true;
  static constexpr int kGroup = 8;
  static constexpr int kPrefetchLines = 3;  // 8 x 3 lines cover a super-block
  static constexpr int64_t kPrefetchAhead = 2 * tile16_shape(kType).bytes;
  struct Group {
    const uint8_t* quants;
    const uint8_t* meta;  // d, dmin, then each sub-block's scale (low 4 bits) and min (high 4)
    __m512 d, neg_dmin;
    BATON_AVX512_INLINE void sub_block(int v, __m512& scale, __m512& off) const {
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(meta + 64 + 16 * v));
      const __m128i m4 = _mm_set1_epi8(0x0F);
      const __m128i sc = _mm_and_si128(b, m4), mn = _mm_and_si128(_mm_srli_epi16(b, 4), m4);
      scale = _mm512_mul_ps(d, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(sc)));
      off = _mm512_mul_ps(neg_dmin, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(mn)));
    }
    BATON_AVX512_INLINE void scales(int j, Scales& s) const {
      sub_block(2 * j, s.lo, s.off);
      sub_block(2 * j + 1, s.hi, s.off_hi);
    }
    // Block j = 4n + k: bits 2k of half n's bytes.
    BATON_AVX512_INLINE __m512i quad(int j, int q) const {
      const int n = j / 4, k = j % 4;
      __m512i v = _mm512_loadu_si512(quants + 512 * n + 64 * q);
      if (k > 0) v = _mm512_srli_epi16(v, 2 * k);
      return _mm512_and_si512(v, _mm512_set1_epi8(0x03));
    }
  };
  static BATON_AVX512_INLINE Group group(const uint8_t* tile, int64_t g) {
    const uint8_t* meta = tile + tile16_scales_at(kType, g);
    return {tile + tile16_quants_at(kType, g), meta, f16x16(meta),
            _mm512_sub_ps(_mm512_setzero_ps(), f16x16(meta + 32))};
  }
};

// Q3_K and Q6_K: a signed int8 scale per 16-element sub-block, levels q + kBias from low bits
// and high bits stored apart (tiles16.h).
template <gguf::TensorType T>
struct Tiles16SplitK {
  static constexpr auto kType = T;
  static constexpr bool kQ3 = T == gguf::TensorType::Q3_K;
  // Q3_K: 2 low bits plus 4 times the high bit is q + 4; Q6_K: 4 low bits and 2 high, q + 32.
  static constexpr int kBias = kQ3 ? 4 : 32;
  static constexpr bool kOffset = false, kHalfOffset = false, kSplit = true;
  static constexpr int kGroup = 8;
  static constexpr int kPrefetchLines = kQ3 ? 4 : 7;  // 8 x this many lines cover a super-block
  static constexpr int64_t kPrefetchAhead = 2 * tile16_shape(kType).bytes;
  struct Group {
    const uint8_t* quants;
    const uint8_t* meta;  // d, then each 16-element sub-block's scale (Q3_K's less 32)
    __m512 d;
    BATON_AVX512_INLINE void scales(int j, Scales& s) const {
      s.lo = int8_scales(d, meta + 32 + 32 * j);
      s.hi = int8_scales(d, meta + 48 + 32 * j);
    }
    // Block j = 4n + k. Q3_K: bits 2k of half n's bytes, bit j of hmask to bit 2. Q6_K: the low
    // 4 bits from ql chunk k % 2 (high nibbles for k >= 2), bits 2k of qh to bits 4-5.
    BATON_AVX512_INLINE __m512i quad(int j, int q) const {
      const int n = j / 4, k = j % 4;
      if constexpr (kQ3) {
        const __m512i lo = move_bits(_mm512_loadu_si512(quants + 512 + 512 * n + 64 * q), 2 * k, 0);
        const __m512i h = move_bits(_mm512_loadu_si512(quants + 64 * q), j, 2);
        return join_levels(lo, 0x03, _mm512_and_si512(h, _mm512_set1_epi8(0x04)));
      }
      const uint8_t* run = quants + 1536 * n;
      const __m512i lo =
          move_bits(_mm512_loadu_si512(run + 512 + 512 * (k % 2) + 64 * q), 4 * (k / 2), 0);
      const __m512i h = move_bits(_mm512_loadu_si512(run + 64 * q), 2 * k, 4);
      return join_levels(lo, 0x0F, _mm512_and_si512(h, _mm512_set1_epi8(0x30)));
    }
  };
  static BATON_AVX512_INLINE Group group(const uint8_t* tile, int64_t g) {
    const uint8_t* meta = tile + tile16_scales_at(kType, g);
    return {tile + tile16_quants_at(kType, g), meta, f16x16(meta)};
  }
};
using Tiles16Q3_K = Tiles16SplitK<gguf::TensorType::Q3_K>;
using Tiles16Q6_K = Tiles16SplitK<gguf::TensorType::Q6_K>;

// Block b = group block j against NR x rows: adds its terms to acc.
template <class Tile, int NR>
BATON_AVX512_INLINE void block16(const typename Tile::Group& grp, int j, int64_t b,
                                 const QuantizedX& x, int64_t r0, const uint8_t* const* xq,
                                 __m512* acc) {
  Scales sc;
  grp.scales(j, sc);
  // Two vpdpbusd chains per x row: quads 0..3 and 4..7 for kSplit types (one scale each), else
  // even and odd quads when few x rows leave few independent chains (integer sums: the split
  // never changes a bit).
  constexpr int kChains = Tile::kSplit || NR < 4 ? 2 : 1;
  __m512i dot[kChains][NR];
  for (int i = 0; i < NR; ++i) {
    const int32_t* corr = Tile::kBias != 0 ? x.row_corr(r0 + i) + 8 * b : nullptr;
    dot[0][i] = Tile::kBias != 0 ? _mm512_set1_epi32(corr[0]) : _mm512_setzero_si512();
    if constexpr (kChains == 2) {
      dot[1][i] =
          Tile::kSplit && Tile::kBias != 0 ? _mm512_set1_epi32(corr[1]) : _mm512_setzero_si512();
    }
  }
#pragma GCC unroll 8
  for (int q = 0; q < 8; ++q) {
    const __m512i w = grp.quad(j, q);
    for (int i = 0; i < NR; ++i) {
      __m512i& d = dot[Tile::kSplit ? q / 4 : q % kChains][i];
      d = dot_quad(d, w, xq[i] + b * kQK + 4 * q);
    }
  }
  if constexpr (kChains == 2 && !Tile::kSplit) {
    for (int i = 0; i < NR; ++i) dot[0][i] = _mm512_add_epi32(dot[0][i], dot[1][i]);
  }
  for (int i = 0; i < NR; ++i) {
    const __m512 dx = _mm512_set1_ps(x.row_d(r0 + i)[b]);
    acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[0][i]), _mm512_mul_ps(sc.lo, dx), acc[i]);
    if constexpr (Tile::kSplit) {
      acc[i] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot[1][i]), _mm512_mul_ps(sc.hi, dx), acc[i]);
    }
    if constexpr (Tile::kOffset) {
      acc[i] = _mm512_fmadd_ps(sc.off, _mm512_set1_ps(x.row_s(r0 + i)[b]), acc[i]);
    }
    if constexpr (Tile::kHalfOffset) {
      const float* s2 = x.row_s2(r0 + i) + 2 * b;
      acc[i] = _mm512_fmadd_ps(sc.off, _mm512_set1_ps(s2[0]), acc[i]);
      acc[i] = _mm512_fmadd_ps(sc.off_hi, _mm512_set1_ps(s2[1]), acc[i]);
    }
  }
}

// NR x rows (from r0) against the tile at `tile`; n_valid of its 16 rows are stored.
// Lines [far, far_end) are fetched into L2 while this tile's rows are computed, at most
// per_block per block (see rows16).
struct FarPrefetch {
  const uint8_t* far = nullptr;
  const uint8_t* far_end = nullptr;
  int64_t per_block = 0;
};

template <class Tile, int NR>
BATON_AVX512 void tile_rows16(const uint8_t* tile, const QuantizedX& x, int64_t r0, float* y,
                              int64_t y_stride, int64_t o0, int n_valid, FarPrefetch fp) {
  __m512 acc[NR];
  const uint8_t* xq[NR];
  for (int i = 0; i < NR; ++i) {
    acc[i] = _mm512_setzero_ps();
    xq[i] = x.row_qs(r0 + i);
  }
  for (int64_t g = 0; g < x.nb / Tile::kGroup; ++g) {
    const typename Tile::Group grp = Tile::group(tile, g);
#pragma GCC unroll 8
    for (int j = 0; j < Tile::kGroup; ++j) {
      // Only the first pass over a tile streams it from memory; later row groups find it cached.
      if (Tile::kPrefetchLines > 0 && r0 == 0) {
        const uint8_t* ahead = grp.meta + Tile::kPrefetchAhead + 64 * Tile::kPrefetchLines * j;
        for (int l = 0; l < Tile::kPrefetchLines; ++l) {
          _mm_prefetch(reinterpret_cast<const char*>(ahead + 64 * l), _MM_HINT_T0);
        }
      }
      for (int64_t l = 0; l < fp.per_block && fp.far < fp.far_end; ++l, fp.far += 64) {
        _mm_prefetch(reinterpret_cast<const char*>(fp.far), _MM_HINT_T1);
      }
      block16<Tile, NR>(grp, j, g * Tile::kGroup + j, x, r0, xq, acc);
    }
  }
  const __mmask16 keep = __mmask16((1u << n_valid) - 1);
  for (int i = 0; i < NR; ++i) _mm512_mask_storeu_ps(y + (r0 + i) * y_stride + o0, keep, acc[i]);
}

template <class Tile>
void tile_dispatch(int nr, const uint8_t* tile, const QuantizedX& x, int64_t r0, float* y,
                   int64_t y_stride, int64_t o0, int n_valid, FarPrefetch fp) {
  switch (nr) {
#define BATON_CASE(n) \
  case n:             \
    return tile_rows16<Tile, n>(tile, x, r0, y, y_stride, o0, n_valid, fp);
    BATON_CASE(1)
    BATON_CASE(2)
    BATON_CASE(3)
    BATON_CASE(4)
    BATON_CASE(5)
    BATON_CASE(6)
    BATON_CASE(7)
#undef BATON_CASE
    default:
      return tile_rows16<Tile, 8>(tile, x, r0, y, y_stride, o0, n_valid, fp);
  }
}

// Tiles are computed a chunk at a time, each x tile of up to kMaxXRows rows passing over the
// chunk while it sits in L2. With more than one x row, the core computes for longer than it takes
// to read the chunk, but a pass reads its tiles only as fast as it computes them: streaming and
// arithmetic do not overlap by themselves, and a step of 16 rows cost a matrix-vector product plus
// 16 rows' arithmetic. So the passes over one chunk also fetch the next chunk of this thread's run
// into L2, spread evenly over their blocks (a 16-row step of the 1B q8_0 model 8 % faster, a 4-row
// one 9 %: `baton bench engine --contexts 256 --step N`). One x row (decode) is left to the
// hardware prefetchers, which keep up with a matrix-vector product on their own.
template <class Tile>
void rows16(const MatrixView& w, const QuantizedX& x, int64_t o_begin, int64_t o_end,
            int64_t o_stream_end, float* y) {
  const int64_t nb = int64_t(w.row_stride) / block_shape(w.type).bytes;
  const int64_t tile_bytes = tile16_bytes(w.type, nb);
  const int64_t chunk_rows = kTile16 * std::max<int64_t>(1, kChunkBytes / tile_bytes);
  const int64_t passes = (x.n_x + kMaxXRows - 1) / kMaxXRows;
  const int64_t stream_end = x.n_x > 1 ? std::min(o_stream_end, w.rows) : 0;
  for (int64_t c0 = o_begin; c0 < o_end; c0 += chunk_rows) {
    const int64_t c1 = std::min(o_end, c0 + chunk_rows);
    const int64_t tiles = (c1 - c0 + kTile16 - 1) / kTile16;
    const int64_t next_tiles = (std::min(stream_end, c1 + chunk_rows) - c1 + kTile16 - 1) / kTile16;
    const uint8_t* next = tile_at(w, c1);
    const uint8_t* next_end = next + std::max<int64_t>(0, next_tiles) * tile_bytes;
    // Bytes per tile pass, and lines per block to cover them.
    const int64_t slice = (std::max<int64_t>(0, next_end - next) / (passes * tiles) + 63) / 64 * 64;
    const int64_t per_block = (slice / 64 + nb - 1) / nb;
    int64_t call = 0;
    for (int64_t r0 = 0; r0 < x.n_x; r0 += kMaxXRows) {
      const int nr = int(std::min<int64_t>(kMaxXRows, x.n_x - r0));
      for (int64_t o0 = c0; o0 < c1; o0 += kTile16, ++call) {
        const int n_valid = int(std::min<int64_t>(kTile16, c1 - o0));
        FarPrefetch fp;
        if (slice > 0) {
          const int64_t at = std::min(call * slice, next_end - next);
          fp = {next + at, next + std::min(at + slice, next_end - next), per_block};
        }
        tile_dispatch<Tile>(nr, tile_at(w, o0), x, r0, y, w.rows, o0, n_valid, fp);
      }
    }
  }
}

// Calls fn.template operator()<Tile>() with the tile type of t (a type with 16-row tiles).
template <class F>
void with_tile_type(gguf::TensorType t, F&& fn) {
  using TT = gguf::TensorType;
  switch (t) {
    case TT::Q8_0:
      return fn.template operator()<Tiles16Q8_0>();
    case TT::Q4_0:
      return fn.template operator()<Tiles16Q4_0>();
    case TT::IQ4_NL:
      return fn.template operator()<Tiles16Pair<TT::IQ4_NL>>();
    case TT::MXFP4:
      return fn.template operator()<Tiles16Pair<TT::MXFP4>>();
    case TT::Q4_1:
      return fn.template operator()<Tiles16Pair<TT::Q4_1>>();
    case TT::Q5_0:
      return fn.template operator()<Tiles16Pair<TT::Q5_0>>();
    case TT::IQ4_XS:
      return fn.template operator()<Tiles16IQ4_XS>();
    case TT::Q2_K:
      return fn.template operator()<Tiles16Q2_K>();
    case TT::Q3_K:
      return fn.template operator()<Tiles16Q3_K>();
    case TT::Q4_K:
      return fn.template operator()<Tiles16Q4_K>();
    case TT::Q5_K:
      return fn.template operator()<Tiles16Q5_K>();
    default:
      return fn.template operator()<Tiles16Q6_K>();
  }
}

}  // namespace

LaneForm tiles16_lane_form(gguf::TensorType t) {
  LaneForm form;
  with_tile_type(t, [&]<class Tile>() { form = {Tile::kBias, Tile::kSplit, true}; });
  return form;
}

void quant_rows16_avx512(const MatrixView& w, const QuantizedX& x, int64_t o_begin, int64_t o_end,
                         int64_t o_stream_end, float* y) {
  with_tile_type(w.type,
                 [&]<class Tile>() { rows16<Tile>(w, x, o_begin, o_end, o_stream_end, y); });
}

}  // namespace baton::kernels
