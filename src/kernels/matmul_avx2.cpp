// AVX2 kernel for quantized weights. Weight rows are taken in groups and decoded in place, block
// by block, to the levels of matmul_impl.h's form (scales unpacked once per row); each row is
// dotted with up to 4 x rows at a time so one weight load serves them all. |w| x sign(x, w) keeps
// maddubs inside int16. The operations for one (row, x row) pair never depend on how many x rows
// share the tile.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "kernels/intrinsics.h"
#include "kernels/matmul_impl.h"

#define BATON_AVX2 __attribute__((target("avx2,fma,f16c")))
#define BATON_AVX2_INLINE __attribute__((target("avx2,fma,f16c"), always_inline)) inline

namespace baton::kernels {
namespace {

constexpr int kXTile = 4;
constexpr int64_t kGroupRows = 16;

// 32 bytes at p, and 16 at p (as both halves of a vector).
BATON_AVX2_INLINE __m256i load32(const uint8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}
BATON_AVX2_INLINE __m128i load16(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// Nibbles of 16 bytes as 32 levels 0..15: low nibbles are elements 0..15, high ones 16..31.
BATON_AVX2_INLINE __m256i nibbles16(const uint8_t* p) {
  const __m128i n = load16(p);
  return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(n, 4), n), _mm256_set1_epi8(0x0F));
}

// IQ4_NL / IQ4_XS: levels 0..15 looked up in the non-linear table.
BATON_AVX2_INLINE __m256i iq4_values(__m256i levels) {
  const __m128i t = load16(reinterpret_cast<const uint8_t*>(kIQ4NLValues));
  return _mm256_shuffle_epi8(_mm256_set_m128i(t, t), levels);
}

// MXFP4: levels 0..15 looked up in its table of doubled E2M1 values.
BATON_AVX2_INLINE __m256i mxfp4_values(__m256i levels) {
  const __m128i t = load16(reinterpret_cast<const uint8_t*>(kMXFP4Values));
  return _mm256_shuffle_epi8(_mm256_set_m128i(t, t), levels);
}

// 0xFF in byte l where bit `bit` of byte l of v is set, else 0.
BATON_AVX2_INLINE __m256i bit_set(__m256i v, int bit) {
  const __m256i m = _mm256_set1_epi8(char(1 << bit));
  return _mm256_cmpeq_epi8(_mm256_and_si256(v, m), m);
}

// Q5_0's 32 fifth bits (bit i of qh: element i) as 0x10 in byte i.
BATON_AVX2_INLINE __m256i q5_0_high(const uint8_t* qh_bytes) {
  int32_t qh;
  std::memcpy(&qh, qh_bytes, 4);
  // Byte i takes qh's byte i / 8, then tests its bit i % 8.
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(qh),
      _mm256_setr_epi64x(0, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303));
  const __m256i bits = _mm256_set1_epi64x(int64_t(0x8040201008040201));
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(spread, bits), bits),
                          _mm256_set1_epi8(0x10));
}

// Q2_K / Q3_K: the 2-bit fields of 32-element block j of a super-block whose qs are at qs.
BATON_AVX2_INLINE __m256i k2_levels(const uint8_t* qs, int64_t j) {
  const __m256i v = load32(qs + 32 * (j / 4));
  return _mm256_and_si256(_mm256_srl_epi16(v, _mm_cvtsi32_si128(int(2 * (j % 4)))),
                          _mm256_set1_epi8(3));
}

// Block b of a row of type T decoded in place to the int8 levels unpack_row gives (q in the
// form of matmul_impl.h); the row's scales and offsets come from unpack_row(values = false).
template <gguf::TensorType T>
BATON_AVX2_INLINE __m256i block_levels(const uint8_t* row, int64_t b) {
  using TT = gguf::TensorType;
  const __m256i m4 = _mm256_set1_epi8(0x0F);
  const int64_t j = b % 8;  // 32-element block within a super-block
  if constexpr (T == TT::Q4_0) {
    const uint8_t* blk = row + b * int64_t(sizeof(BlockQ4_0));
    return _mm256_sub_epi8(nibbles16(blk + offsetof(BlockQ4_0, qs)), _mm256_set1_epi8(8));
  } else if constexpr (T == TT::Q4_1) {
    return nibbles16(row + b * int64_t(sizeof(BlockQ4_1)) + offsetof(BlockQ4_1, qs));
  } else if constexpr (T == TT::IQ4_NL) {
    return iq4_values(
        nibbles16(row + b * int64_t(sizeof(BlockIQ4_NL)) + offsetof(BlockIQ4_NL, qs)));
  } else if constexpr (T == TT::MXFP4) {
    return mxfp4_values(
        nibbles16(row + b * int64_t(sizeof(BlockMXFP4)) + offsetof(BlockMXFP4, qs)));
  } else if constexpr (T == TT::Q5_0) {
    const uint8_t* blk = row + b * int64_t(sizeof(BlockQ5_0));
    const __m256i q = _mm256_or_si256(nibbles16(blk + offsetof(BlockQ5_0, qs)),
                                      q5_0_high(blk + offsetof(BlockQ5_0, qh)));
    return _mm256_sub_epi8(q, _mm256_set1_epi8(16));
  } else if constexpr (T == TT::IQ4_XS) {
    const uint8_t* blk = row + (b / 8) * int64_t(sizeof(BlockIQ4_XS));
    return iq4_values(nibbles16(blk + offsetof(BlockIQ4_XS, qs) + 16 * j));
  } else if constexpr (T == TT::Q2_K) {
    const uint8_t* blk = row + (b / 8) * int64_t(sizeof(BlockQ2_K));
    return k2_levels(blk + offsetof(BlockQ2_K, qs), j);
  } else if constexpr (T == TT::Q3_K) {
    const uint8_t* blk = row + (b / 8) * int64_t(sizeof(BlockQ3_K));
    // Level - 4 where the high bit is clear.
    const __m256i clear = _mm256_andnot_si256(
        bit_set(load32(blk + offsetof(BlockQ3_K, hmask)), int(j)), _mm256_set1_epi8(4));
    return _mm256_sub_epi8(k2_levels(blk + offsetof(BlockQ3_K, qs), j), clear);
  } else if constexpr (T == TT::Q4_K || T == TT::Q5_K) {
    constexpr bool kFive = T == TT::Q5_K;
    const uint8_t* blk = row + (b / 8) * int64_t(kFive ? sizeof(BlockQ5_K) : sizeof(BlockQ4_K));
    __m256i n =
        load32(blk + (kFive ? offsetof(BlockQ5_K, qs) : offsetof(BlockQ4_K, qs)) + 32 * (j / 2));
    if (j & 1) n = _mm256_srli_epi16(n, 4);
    n = _mm256_and_si256(n, m4);
    // Q4_K's in-place form is nibble - 8 (its offset holds the 8); Q5_K's level is unsigned.
    if constexpr (!kFive) return _mm256_sub_epi8(n, _mm256_set1_epi8(8));
    const __m256i h = bit_set(load32(blk + offsetof(BlockQ5_K, qh)), int(j));
    return _mm256_or_si256(n, _mm256_and_si256(h, _mm256_set1_epi8(0x10)));
  } else {  // Q6_K
    static_assert(T == TT::Q6_K);
    const int64_t n = j / 4, k = j % 4;
    const uint8_t* blk = row + (b / 8) * int64_t(sizeof(BlockQ6_K));
    __m256i ql = load32(blk + offsetof(BlockQ6_K, ql) + 64 * n + 32 * (k & 1));
    const __m256i qh = load32(blk + offsetof(BlockQ6_K, qh) + 32 * n);
    if (k >= 2) ql = _mm256_srli_epi16(ql, 4);
    const __m256i h =
        _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(int(2 * k))), _mm256_set1_epi8(3));
    return _mm256_sub_epi8(_mm256_or_si256(_mm256_and_si256(ql, m4), _mm256_slli_epi16(h, 4)),
                           _mm256_set1_epi8(32));
  }
}

template <gguf::TensorType T>
BATON_AVX2 void store_block_levels(const uint8_t* row, int64_t b, int8_t* out) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), block_levels<T>(row, b));
}

// A row decoded in place block by block; scales and offsets come from unpack_row(values =
// false), once per row.
template <gguf::TensorType T>
struct InPlaceSource {
  static constexpr bool kHalfOffset = has_half_offsets(T);
  static constexpr bool kOffset =
      T == gguf::TensorType::Q4_K || T == gguf::TensorType::Q4_1 || T == gguf::TensorType::Q5_K;
  const uint8_t* row;
  const UnpackedRow* u;
  BATON_AVX2_INLINE __m256i w(int64_t b) const { return block_levels<T>(row, b); }
  BATON_AVX2_INLINE __m256 scale(int64_t b) const {
    return _mm256_loadu_ps(&u->scale8[size_t(b * 8)]);
  }
  BATON_AVX2_INLINE float off(int64_t b) const { return u->off[size_t(b)]; }
  // Lane 0: offset of the low half, lane 4: of the high half (the lanes their dots land in).
  BATON_AVX2_INLINE __m256 off2(int64_t b) const {
    return _mm256_setr_ps(u->off2[size_t(2 * b)], 0, 0, 0, u->off2[size_t(2 * b + 1)], 0, 0, 0);
  }
};

// A Q8_0 row read in place: its blocks are already int8 with one scale.
struct Q8_0Source {
  static constexpr bool kOffset = false, kHalfOffset = false;
  const BlockQ8_0* blk;
  BATON_AVX2_INLINE __m256i w(int64_t b) const {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk[b].qs));
  }
  BATON_AVX2_INLINE __m256 scale(int64_t b) const { return _mm256_set1_ps(_cvtsh_ss(blk[b].d)); }
  BATON_AVX2_INLINE float off(int64_t) const { return 0.f; }
  BATON_AVX2_INLINE __m256 off2(int64_t) const { return _mm256_setzero_ps(); }
};

template <class Src, int NR>
BATON_AVX2 void row_tile(const Src& src, const QuantizedX& x, int64_t r0, float* y,
                         int64_t y_stride, int64_t o) {
  const int8_t* xq[NR];
  const float* xd[NR];
  const float* xs[NR];
  const float* xs2[NR];
  __m256 acc[NR];
  for (int j = 0; j < NR; ++j) {
    xq[j] = reinterpret_cast<const int8_t*>(x.row_qs(r0 + j));
    xd[j] = x.row_d(r0 + j);
    xs[j] = x.row_s(r0 + j);
    xs2[j] = Src::kHalfOffset ? x.row_s2(r0 + j) : nullptr;
    acc[j] = _mm256_setzero_ps();
  }
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t b = 0; b < x.nb; ++b) {
    const __m256i w = src.w(b);
    const __m256i aw = _mm256_sign_epi8(w, w);
    const __m256 sc = src.scale(b);
    for (int j = 0; j < NR; ++j) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq[j] + b * kQK));
      const __m256i p16 = _mm256_maddubs_epi16(aw, _mm256_sign_epi8(v, w));
      const __m256i p32 = _mm256_madd_epi16(p16, ones);  // lanes 0..3: elements 0..15
      acc[j] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(p32), _mm256_mul_ps(sc, _mm256_set1_ps(xd[j][b])),
                               acc[j]);
      if constexpr (Src::kOffset) {
        acc[j] = _mm256_fmadd_ps(_mm256_zextps128_ps256(_mm_set_ss(src.off(b))),
                                 _mm256_set1_ps(xs[j][b]), acc[j]);
      }
      if constexpr (Src::kHalfOffset) {
        const __m256 s2 = _mm256_setr_ps(xs2[j][2 * b], 0, 0, 0, xs2[j][2 * b + 1], 0, 0, 0);
        acc[j] = _mm256_fmadd_ps(src.off2(b), s2, acc[j]);
      }
    }
  }
  for (int j = 0; j < NR; ++j) {
    alignas(32) float l[8];
    _mm256_store_ps(l, acc[j]);
    y[(r0 + j) * y_stride + o] = ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
  }
}

template <class Src>
void row_dispatch(int nr, const Src& src, const QuantizedX& x, int64_t r0, float* y,
                  int64_t y_stride, int64_t o) {
  switch (nr) {
    case 1:
      return row_tile<Src, 1>(src, x, r0, y, y_stride, o);
    case 2:
      return row_tile<Src, 2>(src, x, r0, y, y_stride, o);
    case 3:
      return row_tile<Src, 3>(src, x, r0, y, y_stride, o);
    default:
      return row_tile<Src, 4>(src, x, r0, y, y_stride, o);
  }
}

// Rows [g0, g1) against every x tile; src(i) gives the source of row g0 + i.
template <class Src, class MakeSrc>
void group(const MatrixView& w, const QuantizedX& x, int64_t g0, int64_t g1, float* y,
           const MakeSrc& make) {
  for (int64_t r0 = 0; r0 < x.n_x; r0 += kXTile) {
    const int nr = int(std::min<int64_t>(kXTile, x.n_x - r0));
    for (int64_t o = g0; o < g1; ++o) row_dispatch<Src>(nr, make(o - g0), x, r0, y, w.rows, o);
  }
}

// Calls fn.template operator()<T>() with w's type as a template argument (a quantized type
// other than Q8_0).
template <class F>
void with_type(gguf::TensorType t, F&& fn) {
  using TT = gguf::TensorType;
  switch (t) {
#define BATON_CASE(T) \
  case TT::T:         \
    return fn.template operator()<TT::T>();
    BATON_CASE(Q4_0)
    BATON_CASE(Q4_1)
    BATON_CASE(Q5_0)
    BATON_CASE(IQ4_NL)
    BATON_CASE(Q2_K)
    BATON_CASE(Q3_K)
    BATON_CASE(Q4_K)
    BATON_CASE(Q5_K)
    BATON_CASE(IQ4_XS)
    BATON_CASE(MXFP4)
#undef BATON_CASE
    default:
      return fn.template operator()<TT::Q6_K>();
  }
}

}  // namespace

void quant_rows_avx2(const MatrixView& w, const QuantizedX& x, int64_t o_begin, int64_t o_end,
                     int64_t /*o_stream_end*/, float* y) {
  thread_local std::vector<UnpackedRow> unpacked(kGroupRows);
  const auto* base = static_cast<const uint8_t*>(w.data);
  for (int64_t g0 = o_begin; g0 < o_end; g0 += kGroupRows) {
    const int64_t g1 = std::min(o_end, g0 + kGroupRows);
    if (w.type == gguf::TensorType::Q8_0) {
      group<Q8_0Source>(w, x, g0, g1, y, [&](int64_t i) {
        return Q8_0Source{
            reinterpret_cast<const BlockQ8_0*>(base + (g0 + i) * int64_t(w.row_stride))};
      });
      continue;
    }
    for (int64_t o = g0; o < g1; ++o) {
      unpack_row(w.type, base + o * int64_t(w.row_stride), w.cols, unpacked[size_t(o - g0)],
                 /*values=*/false);
    }
    with_type(w.type, [&]<gguf::TensorType T>() {
      group<InPlaceSource<T>>(w, x, g0, g1, y, [&](int64_t i) {
        return InPlaceSource<T>{base + (g0 + i) * int64_t(w.row_stride), &unpacked[size_t(i)]};
      });
    });
  }
}

void avx2_block_levels(gguf::TensorType t, const uint8_t* row, int64_t b, int8_t* out) {
  with_type(t, [&]<gguf::TensorType T>() { store_block_levels<T>(row, b, out); });
}

}  // namespace baton::kernels
