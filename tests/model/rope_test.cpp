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

// Devstral Small 2's rope (mistral3): base 1e8 over 128 dims, YaRN factor 48 over an original
// context of 8192, betas 32 and 1, yarn_log_multiplier 1. The ramp runs between pair
// floor(d(32)) = 12 and ceil(d(1)) = 25, d(b) = 128 ln(8192 / (2 pi b)) / (2 ln 1e8) (12.88 and
// 24.92): pair 18 is 6/13 of the way, so its frequency is (6/13) / 48 + 7/13 of the original.
// llama.cpp's magnitude with the log multiplier k is m(1) / m(k), m(k) = 1 + 0.1 k ln 48: 1
// for Devstral's k = 1, (1 + 0.1 ln 48) / (1 + 0.2 ln 48) = 0.78181 for k = 2, and without the
// key m(1) = 1.38712 as for gpt-oss.
TEST(Rope, YarnLogMultiplierOfMistral3) {
  HParams h;
  h.head_dim = h.n_rot = 128;
  h.rope_base = 1e8f;
  h.rope_mode = RopeMode::Normal;
  h.rope_scaling_type = "yarn";
  h.rope_scaling_factor = 48.0f;
  h.rope_orig_ctx = 8192;
  h.rope_yarn_log_mul = 1.0f;
  auto magnitude = [](const HParams& hp) {
    std::vector<float> c(64), s(64);
    Rope(hp, {}).angles(0, c.data(), s.data());
    return c[0];
  };
  EXPECT_NEAR(magnitude(h), 1.0, 1e-6);
  HParams k2 = h;
  k2.rope_yarn_log_mul = 2.0f;
  EXPECT_NEAR(magnitude(k2), 0.7818108, 1e-6);
  HParams none = h;
  none.rope_yarn_log_mul = 0.0f;
  EXPECT_NEAR(magnitude(none), 1.3871201, 1e-6);
  const int32_t pos = 5000;
  std::vector<float> c(64), s(64);
  Rope(h, {}).angles(pos, c.data(), s.data());
  auto theta = [&](int32_t i) { return pos * std::pow(1e8, -2.0 * i / 128); };
  for (int32_t i : {0, 6, 12}) EXPECT_NEAR(s[i], std::sin(theta(i)), 2e-6) << "pair " << i;
  for (int32_t i : {25, 40, 63}) EXPECT_NEAR(s[i], std::sin(theta(i) / 48), 2e-6) << "pair " << i;
  EXPECT_NEAR(s[18], std::sin(theta(18) * (6.0 / (13 * 48) + 7.0 / 13)), 2e-6);
  // The betas from the file move the ramp: beta_fast 64 puts its start at floor(d(64)) = 10
  // (d(64) = 10.47), so pair 12 is already 2/15 of the way down.
  HParams fast = h;
  fast.rope_yarn_beta_fast = 64.0f;
  std::vector<float> c2(64), s2(64);
  Rope(fast, {}).angles(pos, c2.data(), s2.data());
  EXPECT_NEAR(s2[12], std::sin(theta(12) * (2.0 / (15 * 48) + 13.0 / 15)), 2e-6);
}

// mistral3's attention temperature, 1 + beta ln(floor(pos / n) + 1) with n the original
// context: exactly 1 below it, then 1 + 0.1 ln 2 = 1.0693147 from 8192, 1 + 0.1 ln 3 =
// 1.1098612 from 16384, 1 + 0.1 ln 4 = 1.1386294 from 24576; beta 0 turns it off.
TEST(Rope, AttentionTemperatureSteps) {
  EXPECT_EQ(attention_temperature(0.1f, 8192, 0), 1.0f);
  EXPECT_EQ(attention_temperature(0.1f, 8192, 8191), 1.0f);
  EXPECT_NEAR(attention_temperature(0.1f, 8192, 8192), 1.0693147, 1e-7);
  EXPECT_NEAR(attention_temperature(0.1f, 8192, 16383), 1.0693147, 1e-7);
  EXPECT_NEAR(attention_temperature(0.1f, 8192, 16384), 1.1098612, 1e-7);
  EXPECT_NEAR(attention_temperature(0.1f, 8192, 24576), 1.1386294, 1e-7);
  EXPECT_EQ(attention_temperature(0.0f, 8192, 100000), 1.0f);
  EXPECT_EQ(attention_temperature(0.1f, 0, 100000), 1.0f);
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
