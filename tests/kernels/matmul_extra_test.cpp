// The types added after the first four (Q4_1 Q5_0 IQ4_NL Q2_K Q3_K Q5_K IQ4_XS MXFP4): geometry and
// a quantizer for each, random raw blocks (extreme scales included, bytes no quantizer would write)
// through matmul at every SIMD level, and batch invariance. Their quantizers' accuracy is tested in
// quantize_extra_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/levels.h"
#include "kernels/matmul.h"
#include "kernels/matmul_impl.h"
#include "kernels/quantize.h"
#include "kernels/raw_blocks.h"
#include "kernels/simd.h"

namespace baton::kernels {
namespace {

using gguf::TensorType;
using testing::available_levels;
using testing::random_blocks;
using testing::random_values;

const TensorType kExtraTypes[] = {TensorType::Q4_1,   TensorType::Q5_0, TensorType::IQ4_NL,
                                  TensorType::Q2_K,   TensorType::Q3_K, TensorType::Q5_K,
                                  TensorType::IQ4_XS, TensorType::MXFP4};

std::string type_label(TensorType t, SimdLevel l) {
  return std::string(gguf::type_name(t)) + " at " + simd_level_label(l);
}

struct RawWeights {
  TensorType type;
  int64_t rows, cols;
  std::vector<uint8_t> bytes;
  MatrixView view() const { return {type, bytes.data(), rows, cols, kernel_row_bytes(type, cols)}; }
};

RawWeights random_weights(TensorType t, int64_t rows, int64_t cols, uint32_t seed, bool extreme) {
  const int64_t blocks = rows * cols / block_shape(t).elems;
  return RawWeights{t, rows, cols, random_blocks(t, blocks, seed, extreme)};
}

// Checks y against a float64 product of the dequantized weights. Two errors separate them:
// x is quantized per 32 elements (each element off by at most dx/2, dx = amax/127), which
// costs sum |W| * dx/2; and the kernel's float arithmetic (one product and one sum per term,
// at most ~3 terms per block, so a few hundred roundings of 2^-24 for 1024 columns) costs at
// most 2e-5 of the magnitude of its terms, sum (|s*q| + |off|) * (|x| + dx).
void expect_raw_close_to_reference(const RawWeights& w, const std::vector<float>& x, int64_t n_x,
                                   const std::vector<float>& y, const std::string& what) {
  const size_t rb = kernel_row_bytes(w.type, w.cols);
  std::vector<float> deq(size_t(w.cols));
  UnpackedRow u;
  for (int64_t o = 0; o < w.rows; ++o) {
    const uint8_t* row = w.bytes.data() + size_t(o) * rb;
    dequantize_row(w.type, row, deq.data(), w.cols);
    unpack_row(w.type, row, w.cols, u);
    for (int64_t r = 0; r < n_x; ++r) {
      const float* xr = x.data() + r * w.cols;
      double ref = 0, quant = 0, terms = 0;
      for (int64_t b = 0; b < w.cols / 32; ++b) {
        double amax = 0;
        for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(double(xr[b * 32 + i])));
        const double dx = amax / 127;
        for (int i = 0; i < 32; ++i) {
          const int64_t k = b * 32 + i;
          const double off = u.off2.empty() ? u.off[size_t(b)] : u.off2[size_t(2 * b + i / 16)];
          ref += double(deq[size_t(k)]) * xr[k];
          quant += std::fabs(double(deq[size_t(k)])) * dx / 2;
          terms += (std::fabs(double(u.scale8[size_t(b * 8 + (i / 16) * 4)]) * u.q[size_t(k)]) +
                    std::fabs(off)) *
                   (std::fabs(double(xr[k])) + dx);
        }
      }
      const double bound = quant * 1.001 + 2e-5 * terms + 1e-30;
      ASSERT_NEAR(y[size_t(r * w.rows + o)], ref, bound) << what << " row " << o << " x " << r;
    }
  }
}

TEST(MatmulExtra, GeometryAndQuantizer) {
  for (auto t : kExtraTypes) {
    const auto tr = gguf::traits(t);
    EXPECT_TRUE(tr.supported) << tr.name;
    EXPECT_EQ(block_shape(t).elems, int64_t(tr.block_elems)) << tr.name;
    EXPECT_EQ(block_shape(t).bytes, int64_t(tr.block_bytes)) << tr.name;
    std::vector<float> x(256, 1.0f), y(256);
    std::vector<uint8_t> buf(kernel_row_bytes(t, 256));
    ASSERT_NO_THROW(quantize_row(t, x.data(), buf.data(), 256)) << tr.name;
    dequantize_row(t, buf.data(), y.data(), 256);
    for (float v : y) EXPECT_NEAR(v, 1.0f, 1e-3f) << tr.name;
  }
}

// unpack_row's form (s * q + offset) rebuilds each dequantized value exactly: both are one
// product and at most one sum of the same floats, so the matmul reads the weights get_row gives.
TEST(MatmulExtra, UnpackedFormEqualsDequantized) {
  for (auto t : kExtraTypes) {
    for (bool extreme : {false, true}) {
      const auto w = random_weights(t, 8, 512, 3, extreme);
      const size_t rb = kernel_row_bytes(t, 512);
      std::vector<float> deq(512);
      UnpackedRow u;
      for (int64_t o = 0; o < 8; ++o) {
        dequantize_row(t, w.bytes.data() + o * rb, deq.data(), 512);
        unpack_row(t, w.bytes.data() + o * rb, 512, u);
        for (int k = 0; k < 512; ++k) {
          const int b = k / 32, half = (k % 32) / 16;
          const float s = u.scale8[size_t(b * 8 + half * 4)];
          const float off = has_half_offsets(t) ? u.off2[size_t(2 * b + half)] : u.off[size_t(b)];
          const float prod = s * float(u.q[size_t(k)]);
          const float v = off != 0.0f ? prod + off : prod;
          ASSERT_EQ(v, deq[size_t(k)]) << gguf::type_name(t) << " row " << o << " elem " << k;
        }
      }
    }
  }
}

TEST(MatmulExtra, EveryLevelMatchesReference) {
  ThreadPool pool(2);
  for (auto t : kExtraTypes) {
    for (bool extreme : {false, true}) {
      const int64_t rows = 37, cols = 512;
      const auto w = random_weights(t, rows, cols, 11, extreme);
      // 5 rows take AVX-512's direct path, 11 its packed path.
      for (int64_t n_x : {5, 11}) {
        const auto x = random_values(n_x * cols, 12);
        for (auto level : available_levels()) {
          std::vector<float> y(size_t(n_x * rows), -1.0f);
          matmul_at(level, w.view(), x.data(), n_x, y.data(), &pool);
          expect_raw_close_to_reference(w, x, n_x, y,
                                        type_label(t, level) + (extreme ? " extreme" : " random") +
                                            " n_x " + std::to_string(n_x));
        }
      }
    }
  }
}

TEST(MatmulExtra, OddShapes) {
  for (auto t : kExtraTypes) {
    const int64_t block = block_shape(t).elems;
    for (int64_t rows : {1, 5, 13}) {
      const auto w = random_weights(t, rows, 2 * block, uint32_t(rows), false);
      const auto x = random_values(9 * 2 * block, uint32_t(rows + 1));
      for (auto level : available_levels()) {
        ThreadPool pool(3);
        std::vector<float> y(size_t(9 * rows), -1.0f);
        matmul_at(level, w.view(), x.data(), 9, y.data(), &pool);
        expect_raw_close_to_reference(w, x, 9, y,
                                      type_label(t, level) + " rows " + std::to_string(rows));
      }
    }
  }
}

TEST(MatmulExtra, BatchInvariance) {
  const int64_t rows = 45, cols = 1024, n_x = 64;
  const auto x = random_values(n_x * cols, 99);
  ThreadPool pool1(1), pool2(2), pool3(3);
  ThreadPool* pools[] = {&pool1, &pool2, &pool3};
  for (auto t : kExtraTypes) {
    for (bool extreme : {false, true}) {
      const auto w = random_weights(t, rows, cols, 98, extreme);
      for (auto level : available_levels()) {
        std::vector<float> single(size_t(n_x * rows));
        for (int64_t r = 0; r < n_x; ++r) {
          matmul_at(level, w.view(), x.data() + r * cols, 1, &single[size_t(r * rows)], nullptr);
        }
        for (int64_t batch : {2, 3, 9, 64}) {
          for (ThreadPool* pool : pools) {
            std::vector<float> y(size_t(n_x * rows), -1.0f);
            for (int64_t r0 = 0; r0 < n_x; r0 += batch) {
              const int64_t n = std::min(batch, n_x - r0);
              matmul_at(level, w.view(), x.data() + r0 * cols, n, y.data() + r0 * rows, pool);
            }
            ASSERT_EQ(std::memcmp(y.data(), single.data(), y.size() * 4), 0)
                << type_label(t, level) << " batch " << batch << " threads " << pool->size();
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace baton::kernels
