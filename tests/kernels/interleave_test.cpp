// Interleaved weights (kernels/interleave.h, the 16-row tiles of kernels/tiles16.h): for every
// quantized type, matmul gives a scalar model of the tile kernel's arithmetic bit for bit
// (decode-sized and larger batches, partial and odd tiles, with and without threads, one x row
// or many) and stays close to the file layout's results; get_row gives the file's values, and
// other SIMD levels refuse the layout.
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
#include "kernels/tiles16_model.h"

namespace baton::kernels {
namespace {

using gguf::TensorType;
using testing::random_blocks;
using testing::random_values;
using testing::tiles16_model;

const TensorType kQuantTypes[] = {TensorType::Q8_0, TensorType::Q4_0,   TensorType::Q4_1,
                                  TensorType::Q5_0, TensorType::IQ4_NL, TensorType::Q2_K,
                                  TensorType::Q3_K, TensorType::Q4_K,   TensorType::Q5_K,
                                  TensorType::Q6_K, TensorType::IQ4_XS, TensorType::MXFP4};

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
    for (int64_t rows : {1, 4, 7, 13, 16, 64, 70}) {
      const uint32_t matrix_seed = seed++;
      const bool extreme = matrix_seed % 2 == 1;  // as make_pair draws the blocks
      const Pair m = make_pair(type, rows, cols, matrix_seed);
      EXPECT_EQ(interleaved_bytes(m.p),
                size_t((rows + 15) / 16 * tile16_bytes(type, cols / block_shape(type).elems)));
      for (int64_t n_x : {1, 3, 8, 9, 20}) {
        const auto x = random_values(n_x * cols, seed++);
        std::vector<float> yp(size_t(n_x * rows)), yt(yp.size()), ytp(yp.size());
        matmul_at(SimdLevel::Avx512, m.p, x.data(), n_x, yp.data(), nullptr);
        matmul_at(SimdLevel::Avx512, m.t, x.data(), n_x, yt.data(), nullptr);
        matmul_at(SimdLevel::Avx512, m.t, x.data(), n_x, ytp.data(), &pool);
        const std::string what = std::string(gguf::type_name(type)) + " rows " +
                                 std::to_string(rows) + " n_x " + std::to_string(n_x);
        EXPECT_TRUE(same_bits(yt, ytp)) << what << " (threads)";
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
