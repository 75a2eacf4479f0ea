// The step cost model: fitted to steps whose costs come from known coefficients, it predicts
// steps at every context depth, keeps what it learned about one size of step through a long run
// of another, never goes negative, and sizes a chunk to a limit.
#include "sched/cost_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace baton::sched {
namespace {

// The machine the tests pretend to measure: 20 ms per step, 25 ms per decode row (weights read),
// 3 ms per prefill token (compute) and 0.5 ms per thousand query-key pairs (attention: about
// what a 1B model's 32 heads of 128 take on two cores).
const CostModel kTruth{20, 25, 3, 0.5};

StepShape mixed(int32_t rows, int32_t row_depth, int32_t depth, int32_t tokens) {
  StepShape s;
  for (int32_t i = 0; i < rows; ++i) s.add_decode(row_depth);
  s.add_prefill(depth, tokens);
  return s;
}

TEST(CostModel, AttentionPairsCountEveryKeyOfEveryRow) {
  EXPECT_DOUBLE_EQ(attention_kpairs(0, 1), 0.001);  // the first token sees itself
  EXPECT_DOUBLE_EQ(attention_kpairs(0, 4), 0.010);  // 1 + 2 + 3 + 4
  EXPECT_DOUBLE_EQ(attention_kpairs(1000, 2), 2.003);
  StepShape s;
  s.add_decode(99);
  s.add_prefill(10, 2);
  EXPECT_EQ(s.decode_rows, 1);
  EXPECT_EQ(s.prefill_tokens, 2);
  EXPECT_DOUBLE_EQ(s.kpairs, 0.1 + 0.023);
}

TEST(CostModel, FitsMeasuredStepsAndPredictsEveryDepth) {
  CostEstimator est;
  EXPECT_FALSE(est.model().measured());
  // A prefill sweeping a 4K context beside one or two decoding streams, and decode-only steps.
  for (int32_t depth = 0; depth < 4096; depth += 64) {
    StepShape s = mixed(1 + depth / 64 % 2, 500 + depth, depth, 16 + depth / 64 % 3 * 24);
    est.observe(s, kTruth.predict_ms(s));
    StepShape d = mixed(1 + depth / 128 % 3, depth, 0, 0);
    est.observe(d, kTruth.predict_ms(d));
  }
  const CostModel& m = est.model();
  ASSERT_TRUE(m.measured());
  EXPECT_NEAR(m.ms_per_prefill_token, 3, 0.01);
  EXPECT_NEAR(m.ms_per_kpair, 0.5, 0.005);
  for (int32_t depth : {0, 1024, 3000, 6000, 8000}) {
    StepShape s = mixed(2, depth, depth, 32);
    EXPECT_NEAR(m.predict_ms(s) / kTruth.predict_ms(s), 1, 0.01) << "depth " << depth;
  }
}

// What the mixed quantum alone misses: the same chunk costs more deeper into a prompt, and a
// model fitted early in a prefill predicts the later steps because attention is its own term.
TEST(CostModel, ExtrapolatesDepthFromTheAttentionTerm) {
  CostEstimator est;
  for (int32_t depth = 0; depth < 1024; depth += 32) {
    for (int32_t tokens : {16, 64}) {
      StepShape s = mixed(1, depth, depth, tokens);
      est.observe(s, kTruth.predict_ms(s));
    }
    StepShape d = mixed(1, depth, 0, 0);
    est.observe(d, kTruth.predict_ms(d));
  }
  StepShape deep = mixed(1, 7000, 7000, 64);
  StepShape shallow = mixed(1, 0, 0, 64);
  EXPECT_GT(kTruth.predict_ms(deep), 1.3 * kTruth.predict_ms(shallow));
  EXPECT_NEAR(est.model().predict_ms(deep) / kTruth.predict_ms(deep), 1, 0.05);
}

// A latency target holds mixed steps at one small size for minutes; the step sizes seen before
// (a full idle chunk) stay in the fit, so the next full chunk is still predicted.
TEST(CostModel, ALongRunOfOneSizeKeepsWhatOtherSizesTaught) {
  CostEstimator est;
  for (int32_t tokens : {2048, 512, 128, 64}) {
    StepShape s = mixed(0, 0, 0, tokens);
    est.observe(s, kTruth.predict_ms(s));
  }
  StepShape d = mixed(1, 10, 0, 0);
  est.observe(d, kTruth.predict_ms(d));
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> noise(0.9, 1.1);
  for (int i = 0; i < 2000; ++i) {
    StepShape s = mixed(1, 100 + i, i, 16);
    est.observe(s, kTruth.predict_ms(s) * noise(rng));
  }
  StepShape full = mixed(0, 0, 2000, 2048);
  EXPECT_NEAR(est.model().predict_ms(full) / kTruth.predict_ms(full), 1, 0.1);
}

TEST(CostModel, CoefficientsNeverGoNegative) {
  CostEstimator est;
  // Bigger steps that happen to run faster (a noisy machine) would fit a negative per-token
  // cost, which makes a larger chunk look cheaper.
  for (int i = 0; i < 40; ++i) {
    est.observe(mixed(1, 10, 0, 0), 85);
    est.observe(mixed(1, 10, 0, 16), 80 + i % 3);
    est.observe(mixed(1, 10, 0, 64), 70 + i % 5);
  }
  const CostModel& m = est.model();
  for (double c : {m.ms_fixed, m.ms_per_decode_row, m.ms_per_prefill_token, m.ms_per_kpair}) {
    EXPECT_GE(c, 0);
  }
  EXPECT_TRUE(m.measured());
}

TEST(CostModel, OvershootMeasuresTheNoiseAboveThePrediction) {
  CostEstimator est;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> noise(0.8, 1.25);
  for (int i = 0; i < 200; ++i) {
    StepShape s = mixed(1, 100, i * 8, 8 + i % 4 * 16);
    est.observe(s, kTruth.predict_ms(s) * noise(rng));
    StepShape d = mixed(1, 100, 0, 0);
    est.observe(d, kTruth.predict_ms(d) * noise(rng));
  }
  const double o = est.model().overshoot;
  EXPECT_GT(o, 1.05);
  EXPECT_LE(o, CostEstimator::kMaxOvershoot);
  CostModel exact = kTruth;  // without noise nothing is held back
  EXPECT_DOUBLE_EQ(exact.overshoot, 1);
}

TEST(CostModel, LargestChunkKeepsTheLimitAndShrinksWithDepth) {
  CostModel m = kTruth;
  StepShape base = mixed(1, 100, 0, 0);
  const double limit = 120;
  int32_t prev = 1 << 20;
  for (int32_t depth : {0, 2000, 4000, 8000}) {
    const int32_t n = m.largest_chunk(base, depth, limit, 4, 2048);
    StepShape s = base, over = base;
    s.add_prefill(depth, n);
    over.add_prefill(depth, n + 1);
    EXPECT_LE(m.predict_ms(s), limit) << "depth " << depth;
    EXPECT_GT(m.predict_ms(over), limit) << "depth " << depth;
    EXPECT_LT(n, prev) << "depth " << depth;
    prev = n;
  }
  EXPECT_EQ(m.largest_chunk(base, 0, 10, 4, 2048), 4) << "nothing fits: the floor";
  EXPECT_EQ(m.largest_chunk(base, 0, 1e9, 4, 2048), 2048) << "everything fits: the ceiling";
  m.overshoot = 1.2;  // recent steps ran up to 20 % over: aim 20 % lower
  const int32_t held = m.largest_chunk(base, 0, limit, 4, 2048);
  StepShape s = base;
  s.add_prefill(0, held);
  EXPECT_LE(m.predict_ms(s) * 1.2, limit);
}

}  // namespace
}  // namespace baton::sched
