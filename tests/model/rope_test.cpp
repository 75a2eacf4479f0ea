#include "model/rope.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace baton::model {
namespace {

HParams tiny(RopeMode mode) {
  HParams h;
  h.head_dim = 4;
  h.n_rot = 4;
  h.rope_base = 10000.0f;
  h.rope_mode = mode;
  return h;
}

std::vector<float> rotate(const Rope& r, int32_t pos, std::vector<float> v) {
  std::vector<float> c(r.n_pairs()), s(r.n_pairs());
  r.angles(pos, c.data(), s.data());
  r.apply(v.data(), 1, c.data(), s.data());
  return v;
}

TEST(Rope, NormalRotatesAdjacentPairs) {
  Rope r(tiny(RopeMode::Normal), {});
  auto v = rotate(r, 1, {1, 0, 1, 0});
  // pair 0 turns by 1 rad, pair 1 by 10000^(-1/2) = 0.01 rad
  EXPECT_NEAR(v[0], std::cos(1.0), 1e-6);
  EXPECT_NEAR(v[1], std::sin(1.0), 1e-6);
  EXPECT_NEAR(v[2], std::cos(0.01), 1e-6);
  EXPECT_NEAR(v[3], std::sin(0.01), 1e-6);
  EXPECT_EQ(rotate(r, 0, {1, 2, 3, 4}), (std::vector<float>{1, 2, 3, 4}));
}

TEST(Rope, NeoxRotatesHalves) {
  Rope r(tiny(RopeMode::Neox), {});
  auto v = rotate(r, 1, {1, 1, 0, 0});
  EXPECT_NEAR(v[0], std::cos(1.0), 1e-6);
  EXPECT_NEAR(v[2], std::sin(1.0), 1e-6);
  EXPECT_NEAR(v[1], std::cos(0.01), 1e-6);
  EXPECT_NEAR(v[3], std::sin(0.01), 1e-6);
}

TEST(Rope, PartialRotationLeavesTheRestAlone) {
  HParams h = tiny(RopeMode::Normal);
  h.head_dim = 6;
  Rope r(h, {});
  auto v = rotate(r, 3, {1, 0, 1, 0, 5, 6});
  EXPECT_EQ(v[4], 5);
  EXPECT_EQ(v[5], 6);
}

TEST(Rope, LinearScalingAndFrequencyFactors) {
  HParams h = tiny(RopeMode::Normal);
  h.rope_scaling_type = "linear";
  h.rope_scaling_factor = 2.0f;
  EXPECT_EQ(rotate(Rope(h, {}), 2, {1, 0, 1, 0}),
            rotate(Rope(tiny(RopeMode::Normal), {}), 1, {1, 0, 1, 0}));
  // A rope_freqs tensor divides each pair's frequency.
  auto v = rotate(Rope(tiny(RopeMode::Normal), {1.0f, 2.0f}), 1, {1, 0, 1, 0});
  EXPECT_NEAR(v[3], std::sin(0.005), 1e-6);
  EXPECT_NEAR(v[1], std::sin(1.0), 1e-6);
}

TEST(Rope, Llama3ScalingSlowsOnlyLongWavelengths) {
  HParams h;
  h.head_dim = h.n_rot = 128;
  h.rope_base = 500000.0f;
  h.rope_scaling_type = "llama3";
  h.rope_scaling_factor = 8.0f;
  h.rope_orig_ctx = 8192;
  Rope scaled(h, {});
  HParams plain = h;
  plain.rope_scaling_type.clear();
  Rope base(plain, {});
  std::vector<float> c1(64), s1(64), c0(64), s0(64);
  scaled.angles(1000, c1.data(), s1.data());
  base.angles(1000, c0.data(), s0.data());
  EXPECT_EQ(c1[0], c0[0]);  // wavelength 2π: untouched
  EXPECT_EQ(s1[0], s0[0]);
  // the longest wavelength (> 8192) turns 8× slower
  const double f = std::pow(500000.0, -126.0 / 128);
  EXPECT_NEAR(s1[63], std::sin(1000 * f / 8), 1e-6);
  EXPECT_NEAR(s0[63], std::sin(1000 * f), 1e-6);
}

}  // namespace
}  // namespace baton::model
