// Quantizers of Q4_1 Q5_0 IQ4_NL Q2_K Q3_K Q5_K IQ4_XS: dequantize_row (the format's
// reference) reads their blocks back close to the input, for several distributions and for
// extreme rows; re-quantizing the read-back row is stable; zero rows stay exactly zero.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kernels/levels.h"
#include "kernels/quantize.h"

namespace baton::kernels {
namespace {

using gguf::TensorType;
using testing::round_trip;

// How a type spends its bits, for the error bound. Round to nearest with step D leaves an
// error spread evenly over [-D/2, D/2], RMS D / sqrt(12). The step follows from the level count
// 2^bits and the range a (sub-)block must cover:
//   kFreeMin (Q4_1):        range max - min,                          D = range / (levels - 1)
//   kMinThroughZero (K):    range max(max,0) - min(min,0) (mins are unsigned), same D
//   kSymmetric:             the extreme maps to the widest level,     D = 2 * amax / levels
// (IQ4_NL / IQ4_XS count as symmetric 16-level types: their 16 values span -127..113 in steps
// of about 240 / 15 = 16 ~ 2 * 127 / 16.) The bound is `slack` times the RMS of D / sqrt(12)
// over the row's sub-blocks, slack being about 1.1 times the worst ratio measured on the rows
// below (noted per type). It is below 1 where the scale search beats the plain range (by
// clipping the few values at its ends), above 1 where the stored scales' own rounding shows
// (6-bit multiples of an f16), and highest for IQ4, whose table is coarser at its ends (gaps of
// up to 24) where rows away from zero land. A quantizer that misplaces a level, a scale or a
// nibble errs by a good part of a sub-block's range, far above this bound.
enum class Range { kFreeMin, kMinThroughZero, kSymmetric };

struct TypeSpec {
  TensorType type;
  int bits;
  int sub;  // elements per sub-block scale
  Range range;
  double slack;
};

const TypeSpec kSpecs[] = {
    {TensorType::Q4_1, 4, 32, Range::kFreeMin, 1.0},          // measured 0.88
    {TensorType::Q5_0, 5, 32, Range::kSymmetric, 1.05},       // 0.96
    {TensorType::IQ4_NL, 4, 32, Range::kSymmetric, 1.3},      // 1.18 (shifted rows)
    {TensorType::Q2_K, 2, 16, Range::kMinThroughZero, 0.9},   // 0.81
    {TensorType::Q3_K, 3, 16, Range::kSymmetric, 1.1},        // 1.01
    {TensorType::Q5_K, 5, 32, Range::kMinThroughZero, 1.05},  // 0.96
    {TensorType::IQ4_XS, 4, 32, Range::kSymmetric, 1.3},      // 1.19 (shifted rows)
};

std::string name(TensorType t) {
  return std::string(gguf::type_name(t));
}

double rms(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
  return std::sqrt(s / double(a.size()));
}

// The RMS error bound of the comment above for row x.
double error_bound(const TypeSpec& s, const std::vector<float>& x) {
  const double levels = std::ldexp(1.0, s.bits);
  double sum_d2 = 0;
  for (size_t b = 0; b < x.size(); b += size_t(s.sub)) {
    double lo = x[b], hi = x[b], amax = 0;
    for (int i = 0; i < s.sub; ++i) {
      lo = std::min(lo, double(x[b + i]));
      hi = std::max(hi, double(x[b + i]));
      amax = std::max(amax, std::fabs(double(x[b + i])));
    }
    if (s.range == Range::kMinThroughZero) lo = std::min(lo, 0.0), hi = std::max(hi, 0.0);
    const double d = s.range == Range::kSymmetric ? 2 * amax / levels : (hi - lo) / (levels - 1);
    sum_d2 += d * d * s.sub;
  }
  return s.slack * std::sqrt(sum_d2 / double(x.size()) / 12);
}

enum class Dist { kNormal, kUniform, kOutliers, kShifted };
const char* const kDistNames[] = {"normal", "uniform", "outliers", "shifted"};

std::vector<float> random_row(Dist dist, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (auto& v : x) {
    switch (dist) {
      case Dist::kNormal:
        v = normal(rng);
        break;
      case Dist::kUniform:
        v = uniform(rng);
        break;
      case Dist::kOutliers:  // one value in 64 is 10x larger, as in some weight matrices
        v = normal(rng) * (rng() % 64 == 0 ? 10.0f : 1.0f);
        break;
      case Dist::kShifted:  // all positive: the mins (and Q4_1's signed min) matter
        v = 2.0f + 0.5f * uniform(rng);
        break;
    }
  }
  return x;
}

TEST(QuantizeExtra, RandomRowsRoundTripWithinTheBitWidthBound) {
  std::string table;
  for (const auto& s : kSpecs) {
    table += name(s.type) + ":";
    for (Dist dist : {Dist::kNormal, Dist::kUniform, Dist::kOutliers, Dist::kShifted}) {
      double worst_rel = 0;
      for (uint32_t seed = 1; seed <= 3; ++seed) {
        auto x = random_row(dist, 4096, seed);
        for (auto& v : x) v *= 0.02f * float(seed);  // weight-like magnitudes
        const auto y = round_trip(s.type, x);
        const double err = rms(x, y), bound = error_bound(s, x);
        EXPECT_LE(err, bound) << name(s.type) << " " << kDistNames[int(dist)] << " seed " << seed;
        worst_rel = std::max(worst_rel, err / rms(x, std::vector<float>(x.size(), 0.0f)));
      }
      char cell[48];
      std::snprintf(cell, sizeof(cell), " %s %.4f", kDistNames[int(dist)], worst_rel);
      table += cell;
    }
    table += "\n";
  }
  std::printf("relative RMS round-trip error, worst of 3 rows:\n%s", table.c_str());
}

TEST(QuantizeExtra, ZeroRowsGiveExactZeros) {
  const std::vector<float> x(512, 0.0f);
  for (const auto& s : kSpecs) {
    const auto y = round_trip(s.type, x);
    for (float v : y) ASSERT_EQ(v, 0.0f) << name(s.type);
  }
}

// Constants whose scales stay normal f16 numbers (IQ4_XS's d is c / 127 / 32) come back to
// about the f16 precision of the scale (2^-11), not exactly: the scale is rounded.
TEST(QuantizeExtra, ConstantRowsComeBackToF16Precision) {
  for (const auto& s : kSpecs) {
    for (float c : {0.7f, -3.5f, -0.3f, 1000.0f}) {
      const auto y = round_trip(s.type, std::vector<float>(512, c));
      for (float v : y) ASSERT_NEAR(v, c, std::fabs(c) * 2e-3) << name(s.type) << " " << c;
    }
  }
}

TEST(QuantizeExtra, SingleSpikeKeepsTheSpikeAndTheBound) {
  for (const auto& s : kSpecs) {
    for (float spike : {1e4f, -1e4f}) {
      auto x = random_row(Dist::kNormal, 1024, 5);
      x[300] = spike;
      const auto y = round_trip(s.type, x);
      EXPECT_NEAR(y[300], spike, std::fabs(spike) * 0.02) << name(s.type);
      EXPECT_LE(rms(x, y), error_bound(s, x)) << name(s.type) << " spike " << spike;
    }
  }
}

// The f16 scales reach about 6e-8 .. 65504 (times the level): far below, a row reads back as
// zeros; far above, it saturates. Either way no undefined behaviour (the sanitizer builds run
// this), every value finite, and no value of the wrong sign.
TEST(QuantizeExtra, MagnitudesBeyondF16ScalesFlushOrSaturate) {
  for (const auto& s : kSpecs) {
    for (float scale : {1e-30f, 1e30f, -1e30f}) {
      auto x = random_row(Dist::kOutliers, 512, 9);
      for (auto& v : x) v *= scale;
      const auto y = round_trip(s.type, x);
      for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_TRUE(std::isfinite(y[i])) << name(s.type) << " scale " << scale << " at " << i;
        ASSERT_GE(double(x[i]) * y[i], 0.0) << name(s.type) << " scale " << scale << " at " << i;
        if (std::fabs(scale) < 1) {
          ASSERT_LE(std::fabs(y[i]), 1e-6f) << name(s.type);
        }
      }
      if (std::fabs(scale) > 1) {  // saturated, but still far from zero
        const float top = *std::max_element(y.begin(), y.end());
        EXPECT_GT(top, 1e4f) << name(s.type) << " scale " << scale;
      }
    }
  }
}

// A read-back row lies on a grid the quantizer can find again: quantizing it once more moves it
// by much less than the first quantization moved the input (measured: 0 for all but Q5_K, which
// moves it by 0.07 % of the first error on the shifted rows).
TEST(QuantizeExtra, RequantizingTheReadBackRowIsStable) {
  for (const auto& s : kSpecs) {
    for (Dist dist : {Dist::kNormal, Dist::kOutliers, Dist::kShifted}) {
      const auto x = random_row(dist, 2048, 21);
      const auto y = round_trip(s.type, x);
      const auto z = round_trip(s.type, y);
      EXPECT_LE(rms(y, z), 0.02 * rms(x, y)) << name(s.type) << " " << kDistNames[int(dist)];
    }
  }
}

TEST(QuantizeExtra, RejectsLengthsOffTheBlockSize) {
  std::vector<float> x(512, 1.0f);
  std::vector<uint8_t> buf(1024);
  for (const auto& s : kSpecs) {
    const int64_t bad = block_shape(s.type).elems + 16;
    EXPECT_THROW(quantize_row(s.type, x.data(), buf.data(), bad), std::invalid_argument)
        << name(s.type);
  }
}

}  // namespace
}  // namespace baton::kernels
