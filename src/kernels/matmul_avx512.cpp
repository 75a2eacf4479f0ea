// AVX-512 VNNI kernels for the file's weight layout (weights rewritten into 16-row tiles at load
// go to matmul_avx512_r16.cpp). Quantized weights: tiles of 4 weight rows × up to 8 x rows. One
// 32-element block of the 4 rows sits in two registers (128-bit lane i = row i, elements 0..15
// in `lo`, 16..31 in `hi`); each x half-block is broadcast to all lanes, so one dpbusd makes
// 4 partial sums for each of the 4 rows. The weights are the unsigned operand (level + B, see
// LaneForm in matmul_impl.h) and x the signed one; each lane's sum starts at the -B * sum(xq)
// that quantize computed once per x block, so no per-weight-block correction is needed.
// Batches of up to 8 rows read weight blocks straight from the tensor; larger ones first pack
// a group of tiles (the same values, bit for bit) so every x tile reuses the decoded blocks.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/avx512_loaders.h"
#include "kernels/avx512_loaders_extra.h"
#include "kernels/fp16.h"
#include "kernels/intrinsics.h"
#include "kernels/matmul_impl.h"
#include "kernels/quantize.h"

namespace baton::kernels {
namespace {

using avx512::LoaderQ4_0;
using avx512::LoaderQ4_K;
using avx512::LoaderQ6_K;
using avx512::LoaderQ8_0;
using avx512::Quad;
using gguf::TensorType;

constexpr int kMaxXTile = 8;
// Packed weights of one group stay in L2 while every x tile passes over them.
constexpr size_t kPackBytes = 1u << 20;

// Block b of a 4-row tile in lane form: what the loaders produce.
using Packed = Quad;

// Blocks straight from the weights (small batches). A loader is called for the blocks of a
// group in order (sub = 0..kGroup-1): K-quant loaders reuse bytes between sub-blocks.
template <class Loader>
struct DirectSource {
  using L = Loader;
  Loader loader;
  BATON_AVX512_INLINE const Packed& get(int64_t g, int sub, Packed& tmp) {
    loader.load(g, sub, tmp);
    return tmp;
  }
};

// Blocks packed beforehand by the same loader (large batches: one packing serves every x
// tile). Bit-identical to DirectSource, so the path taken never changes a result.
template <class Loader>
struct PackedSource {
  using L = Loader;
  const Packed* blocks;
  BATON_AVX512_INLINE const Packed& get(int64_t g, int sub, Packed&) {
    return blocks[g * Loader::kGroup + sub];
  }
};

// One weight block against NR x rows: the same operations for every (row, x row) pair.
template <class Loader, int NR>
BATON_AVX512_INLINE void quad_block(const Packed& p, int64_t b, const uint8_t* const* xq,
                                    const float* const* xd, const float* const* xs,
                                    const float* const* xs2, const int32_t* const* xc,
                                    __m512* acc) {
  for (int j = 0; j < NR; ++j) {
    const auto* xp = reinterpret_cast<const __m128i*>(xq[j] + b * kQK);
    const __m512i xl = _mm512_broadcast_i32x4(_mm_loadu_si128(xp));
    const __m512i xh = _mm512_broadcast_i32x4(_mm_loadu_si128(xp + 1));
    const __m512 dx = _mm512_set1_ps(xd[j][b]);
    constexpr bool kCorr = Loader::kBias != 0;  // corr is only filled then
    const auto* cp = kCorr ? reinterpret_cast<const __m128i*>(xc[j] + 8 * b) : nullptr;
    const __m512i c_lo =
        kCorr ? _mm512_broadcast_i32x4(_mm_loadu_si128(cp)) : _mm512_setzero_si512();
    if constexpr (Loader::kSplit) {
      const __m512i c_hi =
          kCorr ? _mm512_broadcast_i32x4(_mm_loadu_si128(cp + 1)) : _mm512_setzero_si512();
      const __m512i il = _mm512_dpbusd_epi32(c_lo, p.lo, xl);
      const __m512i ih = _mm512_dpbusd_epi32(c_hi, p.hi, xh);
      acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(il), _mm512_mul_ps(p.slo, dx), acc[j]);
      acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(ih), _mm512_mul_ps(p.shi, dx), acc[j]);
    } else {
      const __m512i i = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(c_lo, p.lo, xl), p.hi, xh);
      acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i), _mm512_mul_ps(p.slo, dx), acc[j]);
    }
    if constexpr (Loader::kOffset) {
      acc[j] = _mm512_fmadd_ps(p.off, _mm512_set1_ps(xs[j][b]), acc[j]);
    }
    if constexpr (Loader::kHalfOffset) {  // both halves' sums in every lane pair
      double pair;
      std::memcpy(&pair, xs2[j] + 2 * b, sizeof pair);
      acc[j] = _mm512_fmadd_ps(p.off, _mm512_castpd_ps(_mm512_set1_pd(pair)), acc[j]);
    }
  }
}

// Accumulates NR x rows against one 4-row tile over every block. The operations for one
// (row, x row) pair are the same whatever NR and the source are: NR only decides how many
// pairs share a weight block.
// The source comes by reference and is copied here: a struct holding vector registers passed by
// value from code built without AVX-512 (quad_dispatch) would be laid out differently by the
// caller and this function (GCC's -Wpsabi), and garble the arguments after it.
template <class Source, int NR>
BATON_AVX512 void quad_tile(const Source& source, const QuantizedX& x, int64_t r0, float* y,
                            int64_t y_stride, int64_t o0, int64_t n_valid) {
  using Loader = typename Source::L;
  Source src = source;
  __m512 acc[NR];
  const uint8_t* xq[NR];
  const float* xd[NR];
  const float* xs[NR];
  const float* xs2[NR];
  const int32_t* xc[NR];
  for (int j = 0; j < NR; ++j) {
    acc[j] = _mm512_setzero_ps();
    xc[j] = Loader::kBias != 0 ? x.row_corr(r0 + j) : nullptr;
    xq[j] = x.row_qs(r0 + j);
    xd[j] = x.row_d(r0 + j);
    xs[j] = x.row_s(r0 + j);
    xs2[j] = Loader::kHalfOffset ? x.row_s2(r0 + j) : nullptr;
  }
  for (int64_t g = 0; g < x.nb / Loader::kGroup; ++g) {
#pragma GCC unroll 8
    for (int sub = 0; sub < Loader::kGroup; ++sub) {
      const int64_t b = g * Loader::kGroup + sub;
      Packed tmp;
      const Packed& p = src.get(g, sub, tmp);
      quad_block<Loader, NR>(p, b, xq, xd, xs, xs2, xc, acc);
    }
  }
  for (int j = 0; j < NR; ++j) {
    alignas(64) float l[16];
    _mm512_store_ps(l, acc[j]);
    for (int i = 0; i < n_valid; ++i) {
      y[(r0 + j) * y_stride + o0 + i] = (l[4 * i] + l[4 * i + 1]) + (l[4 * i + 2] + l[4 * i + 3]);
    }
  }
}

template <class Source>
void quad_dispatch(int nr, const Source& src, const QuantizedX& x, int64_t r0, float* y,
                   int64_t y_stride, int64_t o0, int64_t n_valid) {
  switch (nr) {
    case 1:
      return quad_tile<Source, 1>(src, x, r0, y, y_stride, o0, n_valid);
    case 2:
      return quad_tile<Source, 2>(src, x, r0, y, y_stride, o0, n_valid);
    case 3:
      return quad_tile<Source, 3>(src, x, r0, y, y_stride, o0, n_valid);
    case 4:
      return quad_tile<Source, 4>(src, x, r0, y, y_stride, o0, n_valid);
    case 5:
      return quad_tile<Source, 5>(src, x, r0, y, y_stride, o0, n_valid);
    case 6:
      return quad_tile<Source, 6>(src, x, r0, y, y_stride, o0, n_valid);
    case 7:
      return quad_tile<Source, 7>(src, x, r0, y, y_stride, o0, n_valid);
    default:
      return quad_tile<Source, 8>(src, x, r0, y, y_stride, o0, n_valid);
  }
}

// Row pointers of the tile at o0; missing rows of a last partial tile repeat a real row and
// their sums are dropped.
void tile_rows(const MatrixView& w, int64_t o0, const uint8_t* rows[4]) {
  const auto* base = static_cast<const uint8_t*>(w.data);
  for (int i = 0; i < 4; ++i) {
    rows[i] = base + std::min<int64_t>(o0 + i, w.rows - 1) * int64_t(w.row_stride);
  }
}

template <class Loader>
BATON_AVX512 void pack_tile(const uint8_t* const rows[4], int64_t nb, Packed* out) {
  Loader loader;
  loader.rows = rows;
  for (int64_t g = 0; g < nb / Loader::kGroup; ++g) {
    for (int sub = 0; sub < Loader::kGroup; ++sub)
      loader.load(g, sub, out[g * Loader::kGroup + sub]);
  }
}

template <class Loader>
void quant_rows(const MatrixView& w, const QuantizedX& x, int64_t o_begin, int64_t o_end,
                float* y) {
  const uint8_t* rows[4];
  if (x.n_x <= kMaxXTile) {  // one x tile: each weight block is used once, read it directly
    for (int64_t o0 = o_begin; o0 < o_end; o0 += 4) {
      tile_rows(w, o0, rows);
      DirectSource<Loader> src;
      src.loader.rows = rows;
      quad_dispatch(int(x.n_x), src, x, 0, y, w.rows, o0, std::min<int64_t>(4, o_end - o0));
    }
    return;
  }
  // Raw bytes aligned by hand: outside AVX-512 code GCC does not honour __m512i's alignment
  // in std::vector<Packed>.
  thread_local std::vector<uint8_t> pack_bytes;
  const int64_t group_tiles = std::max<int64_t>(1, int64_t(kPackBytes / (sizeof(Packed) * x.nb)));
  for (int64_t g0 = o_begin; g0 < o_end; g0 += 4 * group_tiles) {
    const int64_t g1 = std::min(o_end, g0 + 4 * group_tiles);
    const int64_t n_tiles = (g1 - g0 + 3) / 4;
    pack_bytes.resize(size_t(n_tiles * x.nb) * sizeof(Packed) + 64);
    auto* pack = reinterpret_cast<Packed*>((reinterpret_cast<uintptr_t>(pack_bytes.data()) + 63) &
                                           ~uintptr_t(63));
    for (int64_t t = 0; t < n_tiles; ++t) {
      tile_rows(w, g0 + 4 * t, rows);
      pack_tile<Loader>(rows, x.nb, &pack[size_t(t * x.nb)]);
    }
    for (int64_t r0 = 0; r0 < x.n_x; r0 += kMaxXTile) {
      const int nr = int(std::min<int64_t>(kMaxXTile, x.n_x - r0));
      for (int64_t t = 0; t < n_tiles; ++t) {
        const int64_t o0 = g0 + 4 * t;
        PackedSource<Loader> src{&pack[size_t(t * x.nb)]};
        quad_dispatch(nr, src, x, r0, y, w.rows, o0, std::min<int64_t>(4, g1 - o0));
      }
    }
  }
}

}  // namespace

BATON_AVX512 void quantize_x_row_avx512(const float* x, QuantizedX& q, int64_t r) {
  // The same arithmetic as quantize_x_row (x_scale, a product and round-to-nearest-even), so
  // every level quantizes x identically.
  const int64_t group = x_group_blocks(q.rounding);
  const __m512 big = _mm512_set1_ps(std::numeric_limits<float>::max());
  bool finite[8];
  for (int64_t g0 = 0; g0 < q.nb; g0 += group) {
    const int64_t g1 = std::min(q.nb, g0 + group);
    __m512 m = _mm512_setzero_ps();
    for (int64_t b = g0; b < g1; ++b) {
      const __m512 a = _mm512_abs_ps(_mm512_loadu_ps(x + b * kQK));
      const __m512 c = _mm512_abs_ps(_mm512_loadu_ps(x + b * kQK + 16));
      const __mmask16 ok =
          _mm512_cmp_ps_mask(a, big, _CMP_LE_OQ) & _mm512_cmp_ps_mask(c, big, _CMP_LE_OQ);
      finite[b - g0] = ok == 0xFFFF;
      if (finite[b - g0]) m = _mm512_max_ps(m, _mm512_max_ps(a, c));
    }
    const float amax = _mm512_reduce_max_ps(m);
    const XScale sc = x_scale(q.rounding, amax);
    const __m512 vid = _mm512_set1_ps(sc.id);
    for (int64_t b = g0; b < g1; ++b) {
      if (!finite[b - g0]) {
        non_finite_block(q, r, b);
        continue;
      }
      const __m512 a = _mm512_loadu_ps(x + b * kQK), c = _mm512_loadu_ps(x + b * kQK + 16);
      const __m512i qa = _mm512_cvtps_epi32(_mm512_mul_ps(a, vid));  // round to nearest even
      const __m512i qc = _mm512_cvtps_epi32(_mm512_mul_ps(c, vid));
      const int sum = _mm512_reduce_add_epi32(_mm512_add_epi32(qa, qc));
      uint8_t* qs = q.qs.data() + (r * q.nb + b) * kQK;
      _mm_storeu_si128(reinterpret_cast<__m128i*>(qs), _mm512_cvtepi32_epi8(qa));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + 16), _mm512_cvtepi32_epi8(qc));
      q.d[size_t(r * q.nb + b)] = sc.d;
      q.s[size_t(r * q.nb + b)] = x_block_sum(q.rounding, sc.d, amax, sum);
    }
  }
}

namespace {

// Calls fn.template operator()<Loader>() with the loader of type t (each reads the plain and
// the 4-row layout); false for a type without one.
template <class F>
bool with_loader(TensorType t, F&& fn) {
  switch (t) {
    case TensorType::Q8_0:
      return fn.template operator()<LoaderQ8_0>(), true;
    case TensorType::Q4_0:
      return fn.template operator()<LoaderQ4_0>(), true;
    case TensorType::Q4_K:
      return fn.template operator()<LoaderQ4_K>(), true;
    case TensorType::Q6_K:
      return fn.template operator()<LoaderQ6_K>(), true;
    case TensorType::Q4_1:
      return fn.template operator()<avx512::LoaderQ4_1>(), true;
    case TensorType::Q5_0:
      return fn.template operator()<avx512::LoaderQ5_0>(), true;
    case TensorType::IQ4_NL:
      return fn.template operator()<avx512::LoaderIQ4_NL>(), true;
    case TensorType::Q2_K:
      return fn.template operator()<avx512::LoaderQ2_K>(), true;
    case TensorType::Q3_K:
      return fn.template operator()<avx512::LoaderQ3_K>(), true;
    case TensorType::Q5_K:
      return fn.template operator()<avx512::LoaderQ5_K>(), true;
    case TensorType::IQ4_XS:
      return fn.template operator()<avx512::LoaderIQ4_XS>(), true;
    case TensorType::MXFP4:
      return fn.template operator()<avx512::LoaderMXFP4>(), true;
    default:
      return false;
  }
}

}  // namespace

LaneForm avx512_lane_form(const MatrixView& w) {
  if (w.interleave != 1) return tiles16_lane_form(w.type);
  LaneForm form;
  with_loader(w.type, [&]<class L>() { form = {L::kBias, L::kSplit}; });
  return form;
}

void quant_rows_avx512(const MatrixView& w, const QuantizedX& x, int64_t o_begin, int64_t o_end,
                       int64_t o_stream_end, float* y) {
  if (w.interleave != 1) return quant_rows16_avx512(w, x, o_begin, o_end, o_stream_end, y);
  with_loader(w.type, [&]<class L>() { quant_rows<L>(w, x, o_begin, o_end, y); });
}

}  // namespace baton::kernels
