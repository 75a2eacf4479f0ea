// AVX2 kernel for quantized weights. Weight rows are taken in groups and decoded in place
// (scales unpacked once per row, matmul_impl.h form); each row is dotted with up to 4 x rows at a
// time so one weight load serves them all. |w| x sign(x, w) keeps maddubs inside int16.
// The operations for one (row, x row) pair never depend on how many x rows share the tile.
// GCC 12's AVX-512 headers seed results with _mm512_undefined_*(), which the uninitialized
// warnings then report at every inlined use.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <vector>

#include "kernels/matmul_impl.h"

#define BATON_AVX2 __attribute__((target("avx2,fma,f16c")))
#define BATON_AVX2_INLINE __attribute__((target("avx2,fma,f16c"), always_inline)) inline

namespace baton::kernels {
namespace {

constexpr int kXTile = 4;
constexpr int64_t kGroupRows = 16;

// A row whose weights are decoded in place block by block; scales and offsets come from
// unpack_row(values = false).
template <gguf::TensorType T>
struct InPlaceSource {
  static constexpr bool kOffset = T == gguf::TensorType::Q4_K;
  static constexpr bool kHalfOffset = false;
  const uint8_t* row;
  const UnpackedRow* u;
  BATON_AVX2_INLINE __m256i w(int64_t b) const {
    const __m256i m4 = _mm256_set1_epi8(0x0F);
    if constexpr (T == gguf::TensorType::Q4_0) {
      const __m128i n = _mm_loadu_si128(
          reinterpret_cast<const __m128i*>(row + b * int64_t(sizeof(BlockQ4_0)) + 2));
      const __m256i both = _mm256_set_m128i(_mm_srli_epi16(n, 4), n);
      return _mm256_sub_epi8(_mm256_and_si256(both, m4), _mm256_set1_epi8(8));
    } else if constexpr (T == gguf::TensorType::Q4_K) {
      const int64_t j = b % 8;
      const uint8_t* qs =
          row + (b / 8) * int64_t(sizeof(BlockQ4_K)) + offsetof(BlockQ4_K, qs) + 32 * (j / 2);
      __m256i n = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs));
      if (j & 1) n = _mm256_srli_epi16(n, 4);
      return _mm256_sub_epi8(_mm256_and_si256(n, m4), _mm256_set1_epi8(8));
    } else {  // Q6_K
      const int64_t j = b % 8, n = j / 4, k = j % 4;
      const uint8_t* blk = row + (b / 8) * int64_t(sizeof(BlockQ6_K));
      __m256i ql = _mm256_loadu_si256(
          reinterpret_cast<const __m256i*>(blk + offsetof(BlockQ6_K, ql) + 64 * n + 32 * (k & 1)));
      const __m256i qh = _mm256_loadu_si256(
          reinterpret_cast<const __m256i*>(blk + offsetof(BlockQ6_K, qh) + 32 * n));
      if (k >= 2) ql = _mm256_srli_epi16(ql, 4);
      const __m256i h = _mm256_and_si256(_mm256_srl_epi16(qh, _mm_cvtsi32_si128(int(2 * k))),
                                         _mm256_set1_epi8(3));
      return _mm256_sub_epi8(_mm256_or_si256(_mm256_and_si256(ql, m4), _mm256_slli_epi16(h, 4)),
                             _mm256_set1_epi8(32));
    }
  }
  BATON_AVX2_INLINE __m256 scale(int64_t b) const {
    return _mm256_loadu_ps(&u->scale8[size_t(b * 8)]);
  }
  BATON_AVX2_INLINE float off(int64_t b) const { return u->off[size_t(b)]; }
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
};

// A row unpacked whole by unpack_row (the types without an in-place decoder here). Decoding
// once per row serves every x tile of the group; the values are the same either way.
template <bool Offset, bool HalfOffset>
struct UnpackedSource {
  static constexpr bool kOffset = Offset, kHalfOffset = HalfOffset;
  const UnpackedRow* u;
  BATON_AVX2_INLINE __m256i w(int64_t b) const {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(&u->q[size_t(b * kQK)]));
  }
  BATON_AVX2_INLINE __m256 scale(int64_t b) const {
    return _mm256_loadu_ps(&u->scale8[size_t(b * 8)]);
  }
  BATON_AVX2_INLINE float off(int64_t b) const { return u->off[size_t(b)]; }
  // Lane 0: offset of the low half, lane 4: of the high half (the lanes their dots land in).
  BATON_AVX2_INLINE __m256 off2(int64_t b) const {
    return _mm256_setr_ps(u->off2[size_t(2 * b)], 0, 0, 0, u->off2[size_t(2 * b + 1)], 0, 0, 0);
  }
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

template <bool Offset, bool HalfOffset>
void unpacked_group_of(const MatrixView& w, const QuantizedX& x, int64_t g0, int64_t g1, float* y,
                       const std::vector<UnpackedRow>& unpacked) {
  using Src = UnpackedSource<Offset, HalfOffset>;
  group<Src>(w, x, g0, g1, y, [&](int64_t i) { return Src{&unpacked[size_t(i)]}; });
}

void unpacked_group(const MatrixView& w, const QuantizedX& x, int64_t g0, int64_t g1, float* y,
                    const std::vector<UnpackedRow>& unpacked) {
  switch (w.type) {
    case gguf::TensorType::Q2_K:
      return unpacked_group_of<false, true>(w, x, g0, g1, y, unpacked);
    case gguf::TensorType::Q4_1:
    case gguf::TensorType::Q5_K:
      return unpacked_group_of<true, false>(w, x, g0, g1, y, unpacked);
    default:  // Q5_0 IQ4_NL Q3_K IQ4_XS: no offset
      return unpacked_group_of<false, false>(w, x, g0, g1, y, unpacked);
  }
}

}  // namespace

void quant_rows_avx2(const MatrixView& w, const QuantizedX& x, int64_t o_begin, int64_t o_end,
                     float* y) {
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
    const bool in_place = w.type == gguf::TensorType::Q4_0 || w.type == gguf::TensorType::Q4_K ||
                          w.type == gguf::TensorType::Q6_K;
    for (int64_t o = g0; o < g1; ++o) {
      unpack_row(w.type, base + o * int64_t(w.row_stride), w.cols, unpacked[size_t(o - g0)],
                 /*values=*/!in_place);
    }
    if (!in_place) {
      unpacked_group(w, x, g0, g1, y, unpacked);
      continue;
    }
    auto run = [&]<gguf::TensorType T>() {
      group<InPlaceSource<T>>(w, x, g0, g1, y, [&](int64_t i) {
        return InPlaceSource<T>{base + (g0 + i) * int64_t(w.row_stride), &unpacked[size_t(i)]};
      });
    };
    switch (w.type) {
      case gguf::TensorType::Q4_0:
        run.template operator()<gguf::TensorType::Q4_0>();
        break;
      case gguf::TensorType::Q4_K:
        run.template operator()<gguf::TensorType::Q4_K>();
        break;
      default:
        run.template operator()<gguf::TensorType::Q6_K>();
        break;
    }
  }
}

}  // namespace baton::kernels
