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

// gpt-oss's rope: base 150000 over 64 dims, YaRN factor 32 over an original context of 4096.
// With beta_fast 32 and beta_slow 1 the ramp runs between pair floor(d(32)) = 8 and
// ceil(d(1)) = 18, where d(b) = 64 ln(4096 / (2 pi b)) / (2 ln 150000) (8.09 and 17.39): pairs
// up to 8 keep their frequency, pairs from 18 turn 32x slower, pair 13 halfway between. cos and
// sin carry the magnitude factor 1 + 0.1 ln 32.
TEST(Rope, YarnRampsFrequenciesAndScalesMagnitude) {
  HParams h;
  h.head_dim = h.n_rot = 64;
  h.rope_base = 150000.0f;
  h.rope_mode = RopeMode::Neox;
  h.rope_scaling_type = "yarn";
  h.rope_scaling_factor = 32.0f;
  h.rope_orig_ctx = 4096;
  const Rope r(h, {});
  const double mscale = 1.0 + 0.1 * std::log(32.0);
  std::vector<float> c(32), s(32);
  r.angles(0, c.data(), s.data());
  EXPECT_NEAR(c[0], mscale, 1e-6);
  EXPECT_EQ(s[5], 0.0f);
  const int32_t pos = 1000;
  r.angles(pos, c.data(), s.data());
  auto theta = [&](int32_t i) { return pos * std::pow(150000.0, -2.0 * i / 64); };
  for (int32_t i : {0, 3, 8}) {
    EXPECT_NEAR(c[i], std::cos(theta(i)) * mscale, 2e-6) << "pair " << i;
    EXPECT_NEAR(s[i], std::sin(theta(i)) * mscale, 2e-6) << "pair " << i;
  }
  for (int32_t i : {18, 25, 31}) {
    EXPECT_NEAR(s[i], std::sin(theta(i) / 32) * mscale, 2e-6) << "pair " << i;
  }
  EXPECT_NEAR(s[13], std::sin(theta(13) * (0.5 / 32 + 0.5)) * mscale, 2e-6);
  // rope.scaling.attn_factor multiplies the magnitude further.
  h.rope_attn_factor = 2.0f;
  Rope twice(h, {});
  std::vector<float> c2(32), s2(32);
  twice.angles(pos, c2.data(), s2.data());
  EXPECT_NEAR(c2[4], 2 * c[4], 1e-6);
  // Applying it rotates and scales a NEOX pair (i, i + 32).
  std::vector<float> v(64, 0.0f);
  v[0] = 1.0f;
  r.apply(v.data(), 1, c.data(), s.data());
  EXPECT_NEAR(v[0], std::cos(theta(0)) * mscale, 2e-6);
  EXPECT_NEAR(v[32], std::sin(theta(0)) * mscale, 2e-6);
}

// The models without YaRN keep cos and sin of magnitude 1 (their bits are unchanged).
TEST(Rope, NoMagnitudeFactorWithoutYarn) {
  const Rope r(tiny(RopeMode::Neox), {});
  std::vector<float> c(2), s(2);
  r.angles(7, c.data(), s.data());
  EXPECT_EQ(c[0], static_cast<float>(std::cos(7.0)));
  EXPECT_EQ(s[0], static_cast<float>(std::sin(7.0)));
}

}  // namespace
}  // namespace baton::model
