#include "kernels/matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/interleave.h"
#include "kernels/levels.h"
#include "kernels/matmul_impl.h"
#include "kernels/quantize.h"
#include "kernels/simd.h"

namespace baton::kernels {
namespace {

using gguf::TensorType;
using testing::available_levels;
using testing::random_values;

const TensorType kAllTypes[] = {TensorType::F32,  TensorType::F16,  TensorType::BF16,
                                TensorType::Q8_0, TensorType::Q4_0, TensorType::Q4_K,
                                TensorType::Q6_K};

std::string label(TensorType t, SimdLevel l) {
  return "type " + std::to_string(int(t)) + " at " + simd_level_label(l);
}

// A quantized weight matrix with its dequantized copy.
struct Weights {
  TensorType type;
  int64_t rows, cols;
  std::vector<uint8_t> bytes;
  std::vector<float> deq;
  MatrixView view() const { return {type, bytes.data(), rows, cols, kernel_row_bytes(type, cols)}; }
};

Weights make_weights(TensorType t, int64_t rows, int64_t cols, uint32_t seed) {
  Weights w{t, rows, cols, {}, {}};
  const size_t rb = kernel_row_bytes(t, cols);
  w.bytes.resize(rb * size_t(rows));
  w.deq.resize(size_t(rows * cols));
  const auto src = random_values(rows * cols, seed);
  for (int64_t r = 0; r < rows; ++r) {
    quantize_row(t, src.data() + r * cols, w.bytes.data() + size_t(r) * rb, cols);
    dequantize_row(t, w.bytes.data() + size_t(r) * rb, w.deq.data() + r * cols, cols);
  }
  return w;
}

// Checks y against a float64 product of the dequantized weights. Quantized types also
// quantize x per 32 elements (error <= dx/2 each), so the bound is sum |W| * dx/2.
void expect_close_to_reference(const Weights& w, const std::vector<float>& x, int64_t n_x,
                               const std::vector<float>& y, const std::string& what) {
  const bool quantized = block_shape(w.type).elems > 1;
  for (int64_t r = 0; r < n_x; ++r) {
    const float* xr = x.data() + r * w.cols;
    for (int64_t o = 0; o < w.rows; ++o) {
      const float* wr = w.deq.data() + o * w.cols;
      double ref = 0, mag = 0, bound = 0;
      for (int64_t i = 0; i < w.cols; ++i) {
        ref += double(wr[i]) * xr[i];
        mag += std::fabs(double(wr[i]) * xr[i]);
      }
      if (quantized) {
        for (int64_t b = 0; b < w.cols; b += 32) {
          double amax = 0, wabs = 0;
          for (int i = 0; i < 32; ++i) {
            amax = std::max(amax, std::fabs(double(xr[b + i])));
            wabs += std::fabs(double(wr[b + i]));
          }
          bound += wabs * amax / 127 / 2;
        }
      }
      bound = bound * 1.01 + 1e-5 * mag + 1e-6;
      ASSERT_NEAR(y[size_t(r * w.rows + o)], ref, bound) << what << " row " << o << " x " << r;
    }
  }
}

TEST(Matmul, EveryTypeAndLevelMatchesReference) {
  ThreadPool pool(2);
  for (auto t : kAllTypes) {
    const int64_t cols = 512, rows = 37, n_x = 5;
    const auto w = make_weights(t, rows, cols, 11);
    const auto x = random_values(n_x * cols, 12);
    for (auto level : available_levels()) {
      std::vector<float> y(size_t(n_x * rows), -1.0f);
      matmul_at(level, w.view(), x.data(), n_x, y.data(), &pool);
      expect_close_to_reference(w, x, n_x, y, label(t, level));
    }
  }
}

TEST(Matmul, OddShapes) {
  struct Shape {
    int64_t rows, cols, n_x;
  };
  for (auto t : kAllTypes) {
    const int64_t block = block_shape(t).elems;
    const int64_t base_cols = block == 1 ? 33 : block;  // float tails are not 16-aligned
    for (Shape s : {Shape{1, base_cols, 1}, Shape{5, base_cols, 9}, Shape{13, 2 * base_cols, 17},
                    Shape{3, 3 * base_cols, 2}}) {
      const auto w = make_weights(t, s.rows, s.cols, uint32_t(s.rows * 7 + s.n_x));
      const auto x = random_values(s.n_x * s.cols, uint32_t(s.cols));
      for (auto level : available_levels()) {
        for (int threads : {1, 3}) {
          ThreadPool pool(threads);
          std::vector<float> y(size_t(s.n_x * s.rows), -1.0f);
          matmul_at(level, w.view(), x.data(), s.n_x, y.data(), &pool);
          expect_close_to_reference(w, x, s.n_x, y,
                                    label(t, level) + " shape " + std::to_string(s.rows) + "x" +
                                        std::to_string(s.cols) + " n_x " + std::to_string(s.n_x));
        }
      }
    }
  }
}

TEST(Matmul, BatchInvariance) {
  // Large enough that even batches of 2 cross the threading threshold of matmul_at.
  const int64_t rows = 45, cols = 1024, n_x = 64;
  const auto x = random_values(n_x * cols, 99);
  ThreadPool pool1(1), pool2(2), pool3(3);
  ThreadPool* pools[] = {&pool1, &pool2, &pool3};
  for (auto t : kAllTypes) {
    const auto w = make_weights(t, rows, cols, 98);
    for (auto level : available_levels()) {
      // Reference: each x row alone, one thread.
      std::vector<float> single(static_cast<size_t>(n_x * rows));
      std::vector<float> y1(static_cast<size_t>(rows));
      for (int64_t r = 0; r < n_x; ++r) {
        matmul_at(level, w.view(), x.data() + r * cols, 1, y1.data(), nullptr);
        std::memcpy(&single[size_t(r * rows)], y1.data(), size_t(rows) * 4);
      }
      for (int64_t batch : {2, 3, 7, 64}) {
        for (ThreadPool* pool : pools) {
          std::vector<float> y(size_t(n_x * rows), -1.0f);
          for (int64_t r0 = 0; r0 < n_x; r0 += batch) {
            const int64_t n = std::min(batch, n_x - r0);
            matmul_at(level, w.view(), x.data() + r0 * cols, n, y.data() + r0 * rows, pool);
          }
          ASSERT_EQ(std::memcmp(y.data(), single.data(), y.size() * 4), 0)
              << label(t, level) << " batch " << batch << " threads " << pool->size();
        }
      }
    }
  }
}

// Every level must quantize x identically, or results would differ between machines for no
// reason; the AVX-512 row quantizer mirrors the scalar one operation for operation.
TEST(Matmul, XQuantizationIsTheSameAtEveryLevel) {
  if (detected_simd_level() != SimdLevel::Avx512) GTEST_SKIP() << "CPU lacks AVX-512 VNNI";
  auto x = random_values(4 * 256, 31);
  x[5] = 0.0f;
  for (int i = 64; i < 96; ++i) x[size_t(i)] = 0.0f;  // an all-zero block
  x[200] = 1e30f;
  QuantizedX a, b;
  resize_quantized_x(a, 4, 8, true);
  resize_quantized_x(b, 4, 8, true);
  for (int r = 0; r < 4; ++r) {
    quantize_x_row(x.data() + r * 256, a, r);
    quantize_x_row_avx512(x.data() + r * 256, b, r);
  }
  EXPECT_EQ(a.qs, b.qs);
  EXPECT_EQ(a.d, b.d);
  EXPECT_EQ(a.s, b.s);
}

// An activation block holding NaN or Inf (a model whose weights overflow) makes every output
// that sums over it NaN at every level and layout, never an out-of-range conversion to an integer
// (UBSan checks that in the sanitizer build), and leaves the other x rows untouched.
TEST(Matmul, NonFiniteActivationsGiveNaN) {
  std::vector<uint8_t> w(size_t(kernel_row_bytes(TensorType::Q8_0, 64)) * 16);
  quantize_row(TensorType::Q8_0, random_values(16 * 64, 5).data(), w.data(), 16 * 64);
  const MatrixView view{TensorType::Q8_0, w.data(), 16, 64, kernel_row_bytes(TensorType::Q8_0, 64)};
  for (float bad :
       {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
    auto x = random_values(2 * 64, 6);
    x[40] = bad;  // row 0, second block
    std::vector<std::pair<SimdLevel, MatrixView>> runs;
    for (auto level : available_levels()) runs.emplace_back(level, view);
    std::vector<uint8_t> tiles;
    if (detected_simd_level() == SimdLevel::Avx512) {
      tiles.resize(interleaved_bytes(view));
      runs.emplace_back(SimdLevel::Avx512, interleave_rows(view, tiles.data(), nullptr));
    }
    for (const auto& [level, v] : runs) {
      std::vector<float> y(2 * 16);
      matmul_at(level, v, x.data(), 2, y.data(), nullptr);
      const std::string what =
          std::string(simd_level_label(level)) + " interleave " + std::to_string(v.interleave);
      for (int o = 0; o < 16; ++o) {
        EXPECT_TRUE(std::isnan(y[size_t(o)])) << what << " row " << o;
        EXPECT_TRUE(std::isfinite(y[size_t(16 + o)])) << what << " row " << o;
      }
    }
  }
}

TEST(Matmul, ProcessLevelAndName) {
  const std::string name = simd_level_name();
  EXPECT_TRUE(name == "avx512-vnni" || name == "avx2" || name == "scalar") << name;
  EXPECT_LE(int(active_simd_level()), int(detected_simd_level()));
  const auto w = make_weights(TensorType::Q8_0, 8, 64, 5);
  const auto x = random_values(64, 6);
  std::vector<float> a(8), b(8);
  matmul(w.view(), x.data(), 1, a.data(), nullptr);
  matmul_at(active_simd_level(), w.view(), x.data(), 1, b.data(), nullptr);
  EXPECT_EQ(a, b);
}

TEST(Matmul, RejectsBadInput) {
  const auto w = make_weights(TensorType::Q8_0, 4, 64, 5);
  std::vector<float> x(64), y(4);
  MatrixView v = w.view();
  v.cols = 40;  // not a multiple of 32
  EXPECT_THROW(matmul(v, x.data(), 1, y.data(), nullptr), std::invalid_argument);
  v = w.view();
  v.type = TensorType::Q5_1;
  EXPECT_THROW(matmul(v, x.data(), 1, y.data(), nullptr), std::invalid_argument);
  v = w.view();
  v.row_stride = 10;
  EXPECT_THROW(matmul(v, x.data(), 1, y.data(), nullptr), std::invalid_argument);
  EXPECT_THROW(matmul(w.view(), nullptr, 1, y.data(), nullptr), std::invalid_argument);
  matmul(w.view(), x.data(), 0, y.data(), nullptr);  // empty batch is a no-op
}

TEST(Matmul, ViewOfAndGetRow) {
  const auto w = make_weights(TensorType::Q4_K, 3, 256, 21);
  gguf::TensorInfo info;
  info.name = "blk.0.ffn_up.weight";
  info.type = TensorType::Q4_K;
  info.dims = {256, 3};
  info.n_elements = 768;
  const MatrixView v = view_of(info, w.bytes.data());
  EXPECT_EQ(v.rows, 3);
  EXPECT_EQ(v.cols, 256);
  EXPECT_EQ(v.row_stride, 144u);
  std::vector<float> row(256);
  get_row(v, 2, row.data());
  EXPECT_EQ(0, std::memcmp(row.data(), w.deq.data() + 512, 256 * 4));
  EXPECT_THROW(get_row(v, 3, row.data()), std::out_of_range);
  info.dims = {256, 3, 2};
  EXPECT_THROW(view_of(info, w.bytes.data()), std::invalid_argument);
  info.dims = {100, 3};
  EXPECT_THROW(view_of(info, w.bytes.data()), std::invalid_argument);
}

}  // namespace
}  // namespace baton::kernels

namespace baton::kernels {
namespace {

// matmul_many gives each job the bits matmul gives it alone, whatever the other jobs (types,
// layouts, sizes, empty ones) and the thread count.
TEST(MatmulMany, EachJobEqualsItsOwnMatmul) {
  struct Spec {
    TensorType type;
    int64_t rows, cols, n_x;
  };
  const Spec specs[] = {{TensorType::Q8_0, 64, 256, 3},  {TensorType::Q4_K, 48, 512, 1},
                        {TensorType::F32, 20, 64, 5},    {TensorType::Q6_K, 32, 256, 0},
                        {TensorType::Q4_0, 37, 128, 9},  {TensorType::F16, 16, 96, 2},
                        {TensorType::Q8_0, 256, 1024, 4}};
  std::vector<Weights> ws;
  std::vector<std::vector<float>> xs;
  std::vector<std::vector<uint8_t>> tiled;
  std::vector<MatrixView> views;
  uint32_t seed = 300;
  for (const auto& s : specs) {
    ws.push_back(make_weights(s.type, s.rows, s.cols, seed++));
    xs.push_back(random_values(std::max<int64_t>(1, s.n_x) * s.cols, seed++));
  }
  const bool avx512 = active_simd_level() == SimdLevel::Avx512;
  for (auto& w : ws) {
    MatrixView v = w.view();
    // Every other quantized matrix in 16-row tiles, as the weight arena lays out experts.
    if (avx512 && interleavable(v) && views.size() % 2 == 0) {
      tiled.emplace_back(interleaved_bytes(v));
      v = interleave_rows(v, tiled.back().data(), nullptr);
    }
    views.push_back(v);
  }
  std::vector<std::vector<float>> want;
  for (size_t j = 0; j < ws.size(); ++j) {
    want.emplace_back(size_t(specs[j].n_x * specs[j].rows), 0.0f);
    matmul(views[j], xs[j].data(), specs[j].n_x, want[j].data(), nullptr);
  }
  ThreadPool pool1(1), pool3(3);
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &pool1, &pool3}) {
    std::vector<std::vector<float>> got;
    std::vector<MatmulJob> jobs;
    for (size_t j = 0; j < ws.size(); ++j) {
      got.emplace_back(size_t(specs[j].n_x * specs[j].rows), -1.0f);
      jobs.push_back({views[j], xs[j].data(), specs[j].n_x, got[j].data()});
    }
    matmul_many(jobs.data(), jobs.size(), pool);
    for (size_t j = 0; j < ws.size(); ++j) {
      // An empty job has no data() to compare (memcmp of a null pointer is undefined).
      ASSERT_TRUE(want[j].empty() ||
                  std::memcmp(got[j].data(), want[j].data(), want[j].size() * 4) == 0)
          << "job " << j << " threads " << (pool ? pool->size() : 0);
      if (specs[j].n_x > 0) {
        expect_close_to_reference(ws[j], xs[j], specs[j].n_x, got[j], "job " + std::to_string(j));
      }
    }
  }
  matmul_many(nullptr, 0, &pool3);  // no jobs: nothing to do
}

TEST(MatmulMany, RejectsBadJobs) {
  const auto w = make_weights(TensorType::Q8_0, 4, 64, 5);
  std::vector<float> x(64), y(4);
  MatmulJob bad{w.view(), nullptr, 1, y.data()};
  EXPECT_THROW(matmul_many(&bad, 1, nullptr), std::invalid_argument);
  MatmulJob odd{w.view(), x.data(), 1, y.data()};
  odd.w.cols = 50;  // not whole blocks
  EXPECT_THROW(matmul_many(&odd, 1, nullptr), std::invalid_argument);
}

}  // namespace
}  // namespace baton::kernels
