// Tile-interleaved weights (kernels/interleave.h): every quantized type gives the same bytes
// as its plain layout through matmul (decode-sized and packed batches, partial last tiles, with
// and without threads) and get_row, and other SIMD levels refuse the layout with a clear error.
#include "kernels/interleave.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "kernels/levels.h"
#include "kernels/matmul.h"
#include "kernels/raw_blocks.h"
#include "kernels/simd.h"

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
  m.t = interleave_rows4(m.p, m.tiled.data(), nullptr);
  return m;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(Interleave, SameResultsAsThePlainLayout) {
  if (detected_simd_level() != SimdLevel::Avx512) {
    GTEST_SKIP() << "this CPU has no AVX-512 VNNI; interleaved weights are not used here";
  }
  ThreadPool pool(2);
  uint32_t seed = 1;
  for (auto type : kQuantTypes) {
    const int64_t cols = block_shape(type).elems == 256 ? 512 : 128;
    for (int64_t rows : {1, 4, 7, 13, 64}) {
      const Pair m = make_pair(type, rows, cols, seed++);
      EXPECT_EQ(interleaved_bytes(m.p),
                size_t((rows + 3) / 4 * (cols / block_shape(type).elems) * tile_block_bytes(type)));
      for (int64_t n_x : {1, 3, 8, 9, 20}) {
        const auto x = random_values(n_x * cols, seed++);
        std::vector<float> yp(size_t(n_x * rows)), yt(yp.size()), ytp(yp.size());
        matmul_at(SimdLevel::Avx512, m.p, x.data(), n_x, yp.data(), nullptr);
        matmul_at(SimdLevel::Avx512, m.t, x.data(), n_x, yt.data(), nullptr);
        matmul_at(SimdLevel::Avx512, m.t, x.data(), n_x, ytp.data(), &pool);
        const std::string what = std::string(gguf::type_name(type)) + " rows " +
                                 std::to_string(rows) + " n_x " + std::to_string(n_x);
        EXPECT_TRUE(same_bits(yp, yt)) << what << " first: " << yp[0] << " vs " << yt[0];
        EXPECT_TRUE(same_bits(yp, ytp)) << what << " (threads)";
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
  EXPECT_THROW(interleave_rows4(fv, buf.data(), nullptr), std::invalid_argument);
  const Pair m = make_pair(TensorType::Q4_0, 4, 64, 9);
  EXPECT_FALSE(interleavable(m.t));  // already interleaved
}

}  // namespace
}  // namespace baton::kernels
