// Interleaved weights (kernels/interleave.h). The 4-row layout gives the same bytes as the plain
// layout through matmul (decode-sized and packed batches, partial last tiles, with and without
// threads); the 16-row layout of Q8_0 and Q4_K (kernels/tiles16.h) gives a scalar model of its
// own arithmetic bit for bit, whatever the batch and threads, and stays close to the plain
// layout. Both give get_row's values unchanged, and other SIMD levels refuse them.
#include "kernels/interleave.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/blocks.h"
#include "kernels/fp16.h"
#include "kernels/levels.h"
#include "kernels/matmul.h"
#include "kernels/matmul_impl.h"
#include "kernels/raw_blocks.h"
#include "kernels/simd.h"
#include "kernels/tiles16.h"

namespace baton::kernels {
namespace {

using gguf::TensorType;
using testing::random_blocks;
using testing::random_values;

const TensorType kQuantTypes[] = {TensorType::Q8_0, TensorType::Q4_0,   TensorType::Q4_1,
                                  TensorType::Q5_0, TensorType::IQ4_NL, TensorType::Q2_K,
                                  TensorType::Q3_K, TensorType::Q4_K,   TensorType::Q5_K,
                                  TensorType::Q6_K, TensorType::IQ4_XS};

struct Pair {
  std::vector<uint8_t> plain, tiled;
  MatrixView p, t;
};

Pair make_pair(TensorType type, int64_t rows, int64_t cols, uint32_t seed) {
  Pair m;
  const int64_t blocks = rows * cols / block_shape(type).elems;
  m.plain = random_blocks(type, blocks, seed, seed % 2 == 1);
  m.p = MatrixView{type, m.plain.data(), rows, cols, kernel_row_bytes(type, cols)};
  EXPECT_TRUE(interleavable(m.p));
  m.tiled.resize(interleaved_bytes(m.p));
  m.t = interleave_rows(m.p, m.tiled.data(), nullptr);
  return m;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Q4_K / Q5_K block b: the dot product of its levels (nibble + 16 * fifth(j, i)) with xq, its
// scale and its offset.
template <class Block, class Fifth>
void k_quant_terms(const Block& blk, int64_t b, const int8_t* xq, int32_t& dot, float& s,
                   float& off, Fifth fifth) {
  const int j = int(b % 8);
  uint8_t sc, m;
  q4k_scale_min(j, blk.scales, &sc, &m);
  for (int i = 0; i < kQK; ++i) {
    const int level = ((blk.qs[32 * (j / 2) + i] >> (4 * (j % 2))) & 0xF) + 16 * fifth(j, i);
    dot += level * xq[b * kQK + i];
  }
  s = fp16_to_fp32(blk.d) * float(sc);
  off = (0.f - fp16_to_fp32(blk.dmin)) * float(m);
}

// Row o of the plain matrix against x row r as the 16-row kernel computes it: per 32-element
// block, the integer dot product, then acc = fma(I, s * dx, acc) and, for Q4_K and Q5_K,
// acc = fma(-dmin * m, sx, acc); Q6_K makes the first step for each 16-element half.
float tiles16_model(const MatrixView& plain, int64_t o, const QuantizedX& qx, int64_t r) {
  const auto* row = static_cast<const uint8_t*>(plain.data) + o * int64_t(plain.row_stride);
  const auto* xq = reinterpret_cast<const int8_t*>(qx.row_qs(r));
  float acc = 0;
  for (int64_t b = 0; b < qx.nb; ++b) {
    int32_t dot = 0;
    float s = 0, off = 0;
    if (plain.type == TensorType::Q8_0) {
      BlockQ8_0 blk;
      std::memcpy(&blk, row + b * int64_t(sizeof blk), sizeof blk);
      for (int i = 0; i < kQK; ++i) dot += int32_t(blk.qs[i]) * xq[b * kQK + i];
      s = fp16_to_fp32(blk.d);
    } else if (plain.type == TensorType::Q4_0 || plain.type == TensorType::IQ4_NL) {
      BlockQ4_0 blk;  // IQ4_NL has the same bytes
      std::memcpy(&blk, row + b * int64_t(sizeof blk), sizeof blk);
      for (int i = 0; i < kQK; ++i) {
        const int nibble = (blk.qs[i % 16] >> (4 * (i / 16))) & 0xF;
        dot +=
            (plain.type == TensorType::Q4_0 ? nibble - 8 : kIQ4NLValues[nibble]) * xq[b * kQK + i];
      }
      s = fp16_to_fp32(blk.d);
    } else if (plain.type == TensorType::Q4_1) {
      BlockQ4_1 blk;
      std::memcpy(&blk, row + b * int64_t(sizeof blk), sizeof blk);
      for (int i = 0; i < kQK; ++i)
        dot += ((blk.qs[i % 16] >> (4 * (i / 16))) & 0xF) * xq[b * kQK + i];
      s = fp16_to_fp32(blk.d);
      off = fp16_to_fp32(blk.m);
    } else if (plain.type == TensorType::Q5_0) {
      BlockQ5_0 blk;
      std::memcpy(&blk, row + b * int64_t(sizeof blk), sizeof blk);
      uint32_t fifth;
      std::memcpy(&fifth, blk.qh, 4);
      for (int i = 0; i < kQK; ++i) {
        const int level = ((blk.qs[i % 16] >> (4 * (i / 16))) & 0xF) | ((fifth >> i) & 1) << 4;
        dot += (level - 16) * xq[b * kQK + i];
      }
      s = fp16_to_fp32(blk.d);
    } else if (plain.type == TensorType::IQ4_XS) {
      BlockIQ4_XS blk;
      std::memcpy(&blk, row + (b / 8) * int64_t(sizeof blk), sizeof blk);
      const int j = int(b % 8);
      for (int i = 0; i < kQK; ++i) {
        const int nibble = (blk.qs[16 * j + i % 16] >> (4 * (i / 16))) & 0xF;
        dot += kIQ4NLValues[nibble] * xq[b * kQK + i];
      }
      s = fp16_to_fp32(blk.d) * float(iq4xs_scale(j, blk) - 32);
    } else if (plain.type == TensorType::Q2_K) {
      BlockQ2_K blk;
      std::memcpy(&blk, row + (b / 8) * int64_t(sizeof blk), sizeof blk);
      const int j = int(b % 8), n = j / 4, k = j % 4;
      int32_t half[2] = {0, 0};
      for (int i = 0; i < kQK; ++i)
        half[i / 16] += ((blk.qs[32 * n + i] >> (2 * k)) & 3) * xq[b * kQK + i];
      const float d = fp16_to_fp32(blk.d), neg_dmin = 0.f - fp16_to_fp32(blk.dmin);
      const float dx = qx.row_d(r)[b];
      for (int h = 0; h < 2; ++h) {
        acc = std::fma(float(half[h]), d * float(blk.scales[2 * j + h] & 0xF) * dx, acc);
      }
      for (int h = 0; h < 2; ++h) {
        acc = std::fma(neg_dmin * float(blk.scales[2 * j + h] >> 4), qx.row_s2(r)[2 * b + h], acc);
      }
      continue;
    } else if (plain.type == TensorType::Q3_K) {
      BlockQ3_K blk;
      std::memcpy(&blk, row + (b / 8) * int64_t(sizeof blk), sizeof blk);
      const int j = int(b % 8), n = j / 4, k = j % 4;
      int32_t half[2] = {0, 0};
      for (int i = 0; i < kQK; ++i) {
        const int level = ((blk.qs[32 * n + i] >> (2 * k)) & 3) | ((blk.hmask[i] >> j) & 1) << 2;
        half[i / 16] += (level - 4) * xq[b * kQK + i];
      }
      const float d = fp16_to_fp32(blk.d), dx = qx.row_d(r)[b];
      acc = std::fma(float(half[0]), d * float(q3k_scale(2 * j, blk.scales) - 32) * dx, acc);
      acc = std::fma(float(half[1]), d * float(q3k_scale(2 * j + 1, blk.scales) - 32) * dx, acc);
      continue;
    } else if (plain.type == TensorType::Q6_K) {
      BlockQ6_K blk;
      std::memcpy(&blk, row + (b / 8) * int64_t(sizeof blk), sizeof blk);
      const int n = int(b % 8) / 4, k = int(b % 4);
      int32_t half[2] = {0, 0};
      for (int i = 0; i < kQK; ++i) {
        const int lo = (blk.ql[64 * n + 32 * (k % 2) + i] >> (4 * (k / 2))) & 0xF;
        const int hi = (blk.qh[32 * n + i] >> (2 * k)) & 3;
        half[i / 16] += ((lo | (hi << 4)) - 32) * xq[b * kQK + i];
      }
      const float d = fp16_to_fp32(blk.d), dx = qx.row_d(r)[b];
      acc = std::fma(float(half[0]), d * float(blk.scales[2 * (b % 8)]) * dx, acc);
      acc = std::fma(float(half[1]), d * float(blk.scales[2 * (b % 8) + 1]) * dx, acc);
      continue;
    } else if (plain.type == TensorType::Q5_K) {
      BlockQ5_K blk;
      std::memcpy(&blk, row + (b / 8) * int64_t(sizeof blk), sizeof blk);
      k_quant_terms(blk, b, xq, dot, s, off, [&](int j, int i) { return (blk.qh[i] >> j) & 1; });
    } else {
      BlockQ4_K blk;
      std::memcpy(&blk, row + (b / 8) * int64_t(sizeof blk), sizeof blk);
      k_quant_terms(blk, b, xq, dot, s, off, [](int, int) { return 0; });
    }
    acc = std::fma(float(dot), s * qx.row_d(r)[b], acc);
    if (plain.type == TensorType::Q4_K || plain.type == TensorType::Q5_K ||
        plain.type == TensorType::Q4_1) {
      acc = std::fma(off, qx.row_s(r)[b], acc);
    }
  }
  return acc;
}

std::vector<float> tiles16_model(const MatrixView& plain, const std::vector<float>& x,
                                 int64_t n_x) {
  QuantizedX qx;
  resize_quantized_x(qx, n_x, plain.cols / kQK, /*half_sums=*/true);
  for (int64_t r = 0; r < n_x; ++r) {
    quantize_x_row(x.data() + r * plain.cols, qx, r);
    half_sums_row(qx, r);
  }
  std::vector<float> y(size_t(n_x * plain.rows));
  for (int64_t r = 0; r < n_x; ++r) {
    for (int64_t o = 0; o < plain.rows; ++o)
      y[size_t(r * plain.rows + o)] = tiles16_model(plain, o, qx, r);
  }
  return y;
}

// Within 1e-4 of the largest |value| (for finite results): the same products summed in
// another order.
bool close(const std::vector<float>& a, const std::vector<float>& b) {
  float scale = 1;
  for (float v : b) {
    if (std::isfinite(v)) scale = std::max(scale, std::fabs(v));
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isfinite(b[i]) && !(std::fabs(a[i] - b[i]) <= 1e-4f * scale)) return false;
  }
  return true;
}

TEST(Interleave, SameResultsAsThePlainLayout) {
  if (detected_simd_level() != SimdLevel::Avx512) {
    GTEST_SKIP() << "this CPU has no AVX-512 VNNI; interleaved weights are not used here";
  }
  ThreadPool pool(2);
  uint32_t seed = 1;
  for (auto type : kQuantTypes) {
    const int64_t cols = block_shape(type).elems == 256 ? 512 : 160;  // 5 blocks: an odd pair
    const int64_t width = interleave_width(type);
    EXPECT_EQ(width, has_tiles16(type) ? 16 : 4) << gguf::type_name(type);
    for (int64_t rows : {1, 4, 7, 13, 16, 64, 70}) {
      const uint32_t matrix_seed = seed++;
      const bool extreme = matrix_seed % 2 == 1;  // as make_pair draws the blocks
      const Pair m = make_pair(type, rows, cols, matrix_seed);
      const int64_t tiles = (rows + width - 1) / width;
      EXPECT_EQ(
          interleaved_bytes(m.p),
          size_t(tiles * (width == 16 ? tile16_bytes(type, cols / block_shape(type).elems)
                                      : cols / block_shape(type).elems * tile_block_bytes(type))));
      for (int64_t n_x : {1, 3, 8, 9, 20}) {
        const auto x = random_values(n_x * cols, seed++);
        std::vector<float> yp(size_t(n_x * rows)), yt(yp.size()), ytp(yp.size());
        matmul_at(SimdLevel::Avx512, m.p, x.data(), n_x, yp.data(), nullptr);
        matmul_at(SimdLevel::Avx512, m.t, x.data(), n_x, yt.data(), nullptr);
        matmul_at(SimdLevel::Avx512, m.t, x.data(), n_x, ytp.data(), &pool);
        const std::string what = std::string(gguf::type_name(type)) + " rows " +
                                 std::to_string(rows) + " n_x " + std::to_string(n_x);
        EXPECT_TRUE(same_bits(yt, ytp)) << what << " (threads)";
        if (width == 4) {
          EXPECT_TRUE(same_bits(yp, yt)) << what << " first: " << yp[0] << " vs " << yt[0];
          continue;
        }
        const auto model = tiles16_model(m.p, x, n_x);
        EXPECT_TRUE(same_bits(model, yt)) << what << " first: " << model[0] << " vs " << yt[0];
        // One x row at a time: the same bits as in the batch.
        std::vector<float> y1(static_cast<size_t>(rows));
        matmul_at(SimdLevel::Avx512, m.t, x.data() + (n_x - 1) * cols, 1, y1.data(), nullptr);
        EXPECT_EQ(std::memcmp(y1.data(), yt.data() + (n_x - 1) * rows, y1.size() * 4), 0) << what;
        if (!extreme) {
          EXPECT_TRUE(close(yt, yp)) << what;
        }
      }
      std::vector<float> rp(static_cast<size_t>(cols)), rt(static_cast<size_t>(cols));
      for (int64_t r = 0; r < rows; ++r) {
        get_row(m.p, r, rp.data());
        get_row(m.t, r, rt.data());
        ASSERT_TRUE(same_bits(rp, rt)) << gguf::type_name(type) << " get_row " << r;
      }
    }
  }
}

TEST(Interleave, OtherLevelsRefuseTheLayout) {
  const Pair m = make_pair(TensorType::Q8_0, 8, 64, 7);
  const auto x = random_values(64, 3);
  std::vector<float> y(8);
  for (auto level : {SimdLevel::Scalar, SimdLevel::Avx2}) {
    if (int(level) > int(detected_simd_level())) continue;
    try {
      matmul_at(level, m.t, x.data(), 1, y.data(), nullptr);
      ADD_FAILURE() << "no error at " << simd_level_label(level);
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("avx512"), std::string::npos) << e.what();
    }
  }
}

TEST(Interleave, OnlyPlainQuantizedMatrices) {
  std::vector<float> f(64 * 4);
  const MatrixView fv{TensorType::F32, f.data(), 4, 64, 256};
  EXPECT_FALSE(interleavable(fv));
  std::vector<uint8_t> buf;
  EXPECT_THROW(interleave_rows(fv, buf.data(), nullptr), std::invalid_argument);
  const Pair m = make_pair(TensorType::Q4_0, 4, 64, 9);
  EXPECT_FALSE(interleavable(m.t));  // already interleaved
}

}  // namespace
}  // namespace baton::kernels
