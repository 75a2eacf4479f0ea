#include "kernels/quantize.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "kernels/fp16.h"
#include "kernels/levels.h"

namespace baton::kernels {
namespace {

using gguf::TensorType;
using testing::round_trip;

std::vector<float> random_values(int64_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = dist(rng);
  return v;
}

double relative_rms_error(const std::vector<float>& x, const std::vector<float>& y) {
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    num += double(x[i] - y[i]) * (x[i] - y[i]);
    den += double(x[i]) * x[i];
  }
  return std::sqrt(num / den);
}

TEST(Quantize, FloatTypesRoundTrip) {
  const auto x = random_values(512, 1);
  EXPECT_EQ(round_trip(TensorType::F32, x), x);
  const auto h = round_trip(TensorType::F16, x);
  const auto b = round_trip(TensorType::BF16, x);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(h[i], x[i], std::fabs(x[i]) * std::ldexp(1.0, -11) + 1e-7) << i;
    EXPECT_NEAR(b[i], x[i], std::fabs(x[i]) * std::ldexp(1.0, -8)) << i;
  }
}

struct ErrorBound {
  TensorType type;
  double max_rel_rms;
  double max_abs_per_block_amax;  // worst |x - y| as a fraction of the block's max |x|
  int block;
};

TEST(Quantize, QuantizedRoundTripErrorBounds) {
  const ErrorBound bounds[] = {
      {TensorType::Q8_0, 0.02, 0.5 / 127 + 1.0 / 1024, 32},
      {TensorType::Q4_0, 0.12, 1.0 / 8 * 1.01, 32},
      {TensorType::Q4_K, 0.12, 0.25, 256},
      {TensorType::Q6_K, 0.035, 0.05, 256},
  };
  for (const auto& bound : bounds) {
    for (uint32_t seed = 1; seed <= 3; ++seed) {
      auto x = random_values(2048, seed, 0.05f * float(seed));
      x[7] = 3.0f;  // an outlier, as activations and some weights have
      const auto y = round_trip(bound.type, x);
      EXPECT_LT(relative_rms_error(x, y), bound.max_rel_rms) << int(bound.type);
      for (size_t b0 = 0; b0 < x.size(); b0 += size_t(bound.block)) {
        float amax = 0;
        for (int i = 0; i < bound.block; ++i) amax = std::max(amax, std::fabs(x[b0 + i]));
        for (int i = 0; i < bound.block; ++i) {
          ASSERT_LE(std::fabs(x[b0 + i] - y[b0 + i]), bound.max_abs_per_block_amax * amax)
              << "type " << int(bound.type) << " element " << b0 + i;
        }
      }
    }
  }
}

TEST(Quantize, ZeroRowsStayZero) {
  for (auto t : {TensorType::Q8_0, TensorType::Q4_0, TensorType::Q4_K, TensorType::Q6_K}) {
    const std::vector<float> x(256, 0.0f);
    EXPECT_EQ(round_trip(t, x), x) << int(t);
  }
}

// Far below the f16 scales' range a row reads back as zeros; far above, its scales saturate at
// the largest half. Either way every value stays finite with the input's sign, and no float out
// of an integer's range is converted (the sanitizer builds run this).
TEST(Quantize, MagnitudesBeyondF16ScalesFlushOrSaturate) {
  for (auto t : {TensorType::Q8_0, TensorType::Q4_0, TensorType::Q4_K, TensorType::Q6_K}) {
    for (float scale : {1e-30f, 1e30f, -1e30f}) {
      auto x = random_values(512, 9);
      for (auto& v : x) v *= scale;
      const auto y = round_trip(t, x);
      for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_TRUE(std::isfinite(y[i])) << int(t) << " scale " << scale << " at " << i;
        ASSERT_GE(double(x[i]) * y[i], 0.0) << int(t) << " scale " << scale << " at " << i;
        if (std::fabs(scale) < 1) {
          ASSERT_LE(std::fabs(y[i]), 1e-6f) << int(t);
        }
      }
      if (std::fabs(scale) > 1) {
        float top = 0;
        for (float v : y) top = std::max(top, std::fabs(v));
        EXPECT_GT(top, 1e4f) << int(t) << " scale " << scale;
      }
    }
  }
}

// A NaN or infinite weight spoils at most the block that holds it: every other block is
// quantized to the same bytes as without it, and nothing undefined happens on the way.
TEST(Quantize, NonFiniteValuesSpoilOnlyTheirBlock) {
  const TensorType types[] = {TensorType::Q8_0, TensorType::Q4_0,   TensorType::Q4_1,
                              TensorType::Q5_0, TensorType::IQ4_NL, TensorType::Q2_K,
                              TensorType::Q3_K, TensorType::Q4_K,   TensorType::Q5_K,
                              TensorType::Q6_K, TensorType::IQ4_XS, TensorType::MXFP4};
  const int64_t n = 1024;
  const auto clean = random_values(n, 17);
  for (auto t : types) {
    const BlockShape shape = block_shape(t);
    std::vector<uint8_t> want(kernel_row_bytes(t, n)), got(want.size());
    quantize_row(t, clean.data(), want.data(), n);
    for (float bad :
         {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
          -std::numeric_limits<float>::infinity()}) {
      auto x = clean;
      const int64_t at = shape.elems + 5;  // in the second block
      x[size_t(at)] = bad;
      quantize_row(t, x.data(), got.data(), n);
      for (size_t byte = 0; byte < got.size(); ++byte) {
        if (int64_t(byte) / shape.bytes == 1) continue;
        ASSERT_EQ(got[byte], want[byte]) << int(t) << " value " << bad << " byte " << byte;
      }
    }
  }
}

TEST(Quantize, RejectsBadLengthsAndTypes) {
  std::vector<float> x(64, 1.0f);
  std::vector<uint8_t> buf(1024);
  EXPECT_THROW(quantize_row(TensorType::Q8_0, x.data(), buf.data(), 33), std::invalid_argument);
  EXPECT_THROW(quantize_row(TensorType::Q4_K, x.data(), buf.data(), 64), std::invalid_argument);
  EXPECT_THROW(dequantize_row(TensorType::Q5_1, buf.data(), x.data(), 32), std::invalid_argument);
  EXPECT_THROW(quantize_row(TensorType::Q5_1, x.data(), buf.data(), 32), std::invalid_argument);
  EXPECT_THROW(kernel_row_bytes(TensorType::Q8_K, 256), std::invalid_argument);
  EXPECT_EQ(kernel_row_bytes(TensorType::Q8_0, 64), 68u);
  EXPECT_EQ(kernel_row_bytes(TensorType::Q6_K, 512), 420u);
}

TEST(Dequantize, HandBuiltQ8_0AndQ4_0) {
  uint8_t q8[34];
  const uint16_t half = 0x3800;  // 0.5
  std::memcpy(q8, &half, 2);
  for (int i = 0; i < 32; ++i) q8[2 + i] = uint8_t(int8_t(i - 16));
  float y[32];
  dequantize_row(TensorType::Q8_0, q8, y, 32);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(y[i], (i - 16) * 0.5f) << i;

  uint8_t q4[18];
  const uint16_t two = 0x4000;  // 2.0
  std::memcpy(q4, &two, 2);
  for (int j = 0; j < 16; ++j) q4[2 + j] = uint8_t(j | ((15 - j) << 4));
  dequantize_row(TensorType::Q4_0, q4, y, 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(y[j], (j - 8) * 2.0f) << j;
    EXPECT_EQ(y[j + 16], (7 - j) * 2.0f) << j;
  }
}

TEST(Dequantize, HandBuiltQ4_K) {
  // Sub-block scales/mins chosen so that the high two bits of blocks 4..7 matter.
  const int sc[8] = {1, 2, 3, 4, 50, 60, 17, 33};
  const int mn[8] = {5, 6, 7, 8, 40, 21, 63, 16};
  const uint8_t packed[12] = {193, 194, 67, 132, 133, 70, 199, 72, 130, 92, 241, 1};
  std::vector<uint8_t> blk(144);
  const uint16_t d = 0x3c00, dmin = 0x3800;  // 1.0, 0.5
  std::memcpy(&blk[0], &d, 2);
  std::memcpy(&blk[2], &dmin, 2);
  std::memcpy(&blk[4], packed, 12);
  for (int i = 0; i < 128; ++i) blk[16 + i] = uint8_t(i * 7 + 3);
  std::vector<float> y(256);
  dequantize_row(TensorType::Q4_K, blk.data(), y.data(), 256);
  for (int e = 0; e < 256; ++e) {
    const int chunk = e / 64, l = e % 64;
    const uint8_t byte = blk[16 + 32 * chunk + (l % 32)];
    const int q = l < 32 ? (byte & 0xF) : (byte >> 4);
    const float expect = 1.0f * sc[e / 32] * q - 0.5f * mn[e / 32];
    ASSERT_EQ(y[size_t(e)], expect) << "element " << e;
  }
}

TEST(Dequantize, HandBuiltQ6_K) {
  std::vector<uint8_t> blk(210);
  for (int i = 0; i < 128; ++i) blk[size_t(i)] = uint8_t(i * 5 + 1);           // ql
  for (int i = 0; i < 64; ++i) blk[size_t(128 + i)] = uint8_t(i * 11 + 7);     // qh
  for (int j = 0; j < 16; ++j) blk[size_t(192 + j)] = uint8_t(int8_t(j - 8));  // scales
  const uint16_t d = 0x3400;                                                   // 0.25
  std::memcpy(&blk[208], &d, 2);
  std::vector<float> y(256);
  dequantize_row(TensorType::Q6_K, blk.data(), y.data(), 256);
  for (int e = 0; e < 256; ++e) {
    const int n = e / 128, g = (e % 128) / 32, l = e % 32;
    const uint8_t lbyte = blk[size_t(64 * n + l + 32 * (g & 1))];
    const int low = g >= 2 ? (lbyte >> 4) : (lbyte & 0xF);
    const int high = (blk[size_t(128 + 32 * n + l)] >> (2 * g)) & 3;
    const int q = (low | (high << 4)) - 32;
    const float expect = 0.25f * float(e / 16 - 8) * float(q);
    ASSERT_EQ(y[size_t(e)], expect) << "element " << e;
  }
}

}  // namespace
}  // namespace baton::kernels
