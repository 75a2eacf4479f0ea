// F32 / F16 / BF16 weights with f32 x: FMA chains in column order, 4 weight rows × up to 4 x
// rows per tile. One (row, x row) pair always runs the same chain and the same final
// reduction, so results do not depend on the tile it falls in.
#include <algorithm>
#include <cstring>

#include "kernels/intrinsics.h"
#include "kernels/matmul_impl.h"

#define BATON_AVX2 __attribute__((target("avx2,fma,f16c")))
#define BATON_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")))

namespace baton::kernels {
namespace {

using gguf::TensorType;

constexpr int kXTile = 4;

template <TensorType T>
BATON_AVX512 __attribute__((always_inline)) inline __m512 load16(const uint8_t* p, int64_t i,
                                                                 __mmask16 m) {
  if constexpr (T == TensorType::F32) {
    return _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(p) + i);
  } else if constexpr (T == TensorType::F16) {
    // The maskz form: the plain one trips a -Wmaybe-uninitialized inside GCC 12's header.
    return _mm512_maskz_cvtph_ps(
        0xFFFF, _mm256_maskz_loadu_epi16(m, reinterpret_cast<const uint16_t*>(p) + i));
  } else {
    const __m256i h = _mm256_maskz_loadu_epi16(m, reinterpret_cast<const uint16_t*>(p) + i);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
}

template <TensorType T, int NR>
BATON_AVX512 void tile512(const uint8_t* const rows[4], const float* x, int64_t cols, int64_t r0,
                          float* y, int64_t y_stride, int64_t o0, int64_t n_valid) {
  __m512 acc[4][NR];
  for (auto& a : acc) {
    for (auto& v : a) v = _mm512_setzero_ps();
  }
  for (int64_t c = 0; c < cols; c += 16) {
    const __mmask16 m = cols - c >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (cols - c)) - 1);
    __m512 wv[4];
    for (int i = 0; i < 4; ++i) wv[i] = load16<T>(rows[i], c, m);
    for (int j = 0; j < NR; ++j) {
      const __m512 xv = _mm512_maskz_loadu_ps(m, x + (r0 + j) * cols + c);
      for (int i = 0; i < 4; ++i) acc[i][j] = _mm512_fmadd_ps(wv[i], xv, acc[i][j]);
    }
  }
  for (int i = 0; i < n_valid; ++i) {
    for (int j = 0; j < NR; ++j) {
      alignas(64) float l[16];
      _mm512_store_ps(l, acc[i][j]);
      float s[8];
      for (int k = 0; k < 8; ++k) s[k] = l[k] + l[k + 8];
      y[(r0 + j) * y_stride + o0 + i] =
          ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
    }
  }
}

template <TensorType T>
BATON_AVX2 __attribute__((always_inline)) inline __m256 load8(const uint8_t* p, int64_t i) {
  if constexpr (T == TensorType::F32) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(p) + i);
  } else if constexpr (T == TensorType::F16) {
    return _mm256_cvtph_ps(_mm_loadu_si128(
        reinterpret_cast<const __m128i*>(reinterpret_cast<const uint16_t*>(p) + i)));
  } else {
    const __m128i h =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(reinterpret_cast<const uint16_t*>(p) + i));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
}

// A tail shorter than 8 is copied into zero-padded buffers and run through the same FMA.
template <TensorType T>
BATON_AVX2 __attribute__((always_inline)) inline __m256 load8_tail(const uint8_t* p, int64_t i,
                                                                   int64_t n) {
  constexpr int kBytes = T == TensorType::F32 ? 4 : 2;
  alignas(32) uint8_t buf[32] = {};
  std::memcpy(buf, p + i * kBytes, size_t(n * kBytes));
  return load8<T>(buf, 0);
}

template <TensorType T, int NR>
BATON_AVX2 void tile256(const uint8_t* const rows[4], const float* x, int64_t cols, int64_t r0,
                        float* y, int64_t y_stride, int64_t o0, int64_t n_valid) {
  __m256 acc[4][NR];
  for (auto& a : acc) {
    for (auto& v : a) v = _mm256_setzero_ps();
  }
  int64_t c = 0;
  for (; c + 8 <= cols; c += 8) {
    __m256 wv[4];
    for (int i = 0; i < 4; ++i) wv[i] = load8<T>(rows[i], c);
    for (int j = 0; j < NR; ++j) {
      const __m256 xv = _mm256_loadu_ps(x + (r0 + j) * cols + c);
      for (int i = 0; i < 4; ++i) acc[i][j] = _mm256_fmadd_ps(wv[i], xv, acc[i][j]);
    }
  }
  if (c < cols) {
    __m256 wv[4];
    for (int i = 0; i < 4; ++i) wv[i] = load8_tail<T>(rows[i], c, cols - c);
    for (int j = 0; j < NR; ++j) {
      const __m256 xv = load8_tail<TensorType::F32>(
          reinterpret_cast<const uint8_t*>(x + (r0 + j) * cols), c, cols - c);
      for (int i = 0; i < 4; ++i) acc[i][j] = _mm256_fmadd_ps(wv[i], xv, acc[i][j]);
    }
  }
  for (int i = 0; i < n_valid; ++i) {
    for (int j = 0; j < NR; ++j) {
      alignas(32) float l[8];
      _mm256_store_ps(l, acc[i][j]);
      y[(r0 + j) * y_stride + o0 + i] =
          ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
    }
  }
}

using TileFn = void (*)(const uint8_t* const[4], const float*, int64_t, int64_t, float*, int64_t,
                        int64_t, int64_t);

template <TensorType T, bool kAvx512>
TileFn pick(int nr) {
  if constexpr (kAvx512) {
    static constexpr TileFn fns[] = {tile512<T, 1>, tile512<T, 2>, tile512<T, 3>, tile512<T, 4>};
    return fns[nr - 1];
  } else {
    static constexpr TileFn fns[] = {tile256<T, 1>, tile256<T, 2>, tile256<T, 3>, tile256<T, 4>};
    return fns[nr - 1];
  }
}

template <bool kAvx512>
TileFn pick_type(TensorType t, int nr) {
  switch (t) {
    case TensorType::F16:
      return pick<TensorType::F16, kAvx512>(nr);
    case TensorType::BF16:
      return pick<TensorType::BF16, kAvx512>(nr);
    default:
      return pick<TensorType::F32, kAvx512>(nr);
  }
}

template <bool kAvx512>
void float_rows(const MatrixView& w, const float* x, int64_t n_x, int64_t o_begin, int64_t o_end,
                float* y) {
  const auto* base = static_cast<const uint8_t*>(w.data);
  // Groups of weight rows small enough to stay in L2 while every x tile passes over them.
  const int64_t group_rows =
      std::max<int64_t>(4, int64_t((256u << 10) / std::max<size_t>(w.row_stride, 1)) / 4 * 4);
  for (int64_t g0 = o_begin; g0 < o_end; g0 += group_rows) {
    const int64_t g1 = std::min(o_end, g0 + group_rows);
    for (int64_t r0 = 0; r0 < n_x; r0 += kXTile) {
      const int nr = int(std::min<int64_t>(kXTile, n_x - r0));
      const TileFn fn = pick_type<kAvx512>(w.type, nr);
      for (int64_t o0 = g0; o0 < g1; o0 += 4) {
        const uint8_t* rows[4];
        for (int i = 0; i < 4; ++i) {
          rows[i] = base + std::min<int64_t>(o0 + i, w.rows - 1) * int64_t(w.row_stride);
        }
        fn(rows, x, w.cols, r0, y, w.rows, o0, std::min<int64_t>(4, g1 - o0));
      }
    }
  }
}

}  // namespace

void float_rows_avx2(const MatrixView& w, const float* x, int64_t n_x, int64_t o_begin,
                     int64_t o_end, float* y) {
  float_rows<false>(w, x, n_x, o_begin, o_end, y);
}

void float_rows_avx512(const MatrixView& w, const float* x, int64_t n_x, int64_t o_begin,
                       int64_t o_end, float* y) {
  float_rows<true>(w, x, n_x, o_begin, o_end, y);
}

}  // namespace baton::kernels
