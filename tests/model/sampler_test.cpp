#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <set>

namespace baton::engine {
namespace {

std::vector<float> ramp(int n) {
  std::vector<float> l(n);
  for (int i = 0; i < n; ++i) l[i] = static_cast<float>(i % 7) * 0.5f;
  return l;
}

TEST(Sampler, GreedyPicksArgmaxLowestIdOnTies) {
  SamplingParams p;
  p.temperature = 0;
  Sampler s(p);
  std::vector<float> l = {1, 3, 2, 3, 0};
  EXPECT_EQ(s.sample(l.data(), 5, {}).id, 1);
  l[4] = 9;
  EXPECT_EQ(s.sample(l.data(), 5, {}).id, 4);
}

TEST(Sampler, LogprobIsFullSoftmax) {
  SamplingParams p;
  p.temperature = 0;
  p.top_logprobs = 2;
  Sampler s(p);
  std::vector<float> l = {0, std::log(3.0f)};
  auto t = s.sample(l.data(), 2, {});
  EXPECT_EQ(t.id, 1);
  EXPECT_NEAR(t.logprob, std::log(0.75), 1e-6);
  ASSERT_EQ(t.top.size(), 2u);
  EXPECT_EQ(t.top[0].first, 1);
  EXPECT_EQ(t.top[1].first, 0);
  EXPECT_NEAR(t.top[1].second, std::log(0.25), 1e-6);
}

std::vector<int32_t> run(const SamplingParams& p, int steps) {
  Sampler s(p);
  auto l = ramp(50);
  std::vector<int32_t> out;
  for (int i = 0; i < steps; ++i) out.push_back(s.sample(l.data(), 50, out).id);
  return out;
}

TEST(Sampler, SameSeedSameTokensOtherSeedOtherTokens) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.seed = 42;
  auto a = run(p, 64), b = run(p, 64);
  EXPECT_EQ(a, b);
  p.seed = 43;
  EXPECT_NE(a, run(p, 64));
  std::set<int32_t> distinct(a.begin(), a.end());
  EXPECT_GT(distinct.size(), 3u);  // it really samples
}

std::set<int32_t> support(SamplingParams p, const std::vector<float>& l, int draws = 400) {
  std::set<int32_t> seen;
  for (int i = 0; i < draws; ++i) {
    p.seed = static_cast<uint64_t>(i);
    Sampler s(p);
    seen.insert(s.sample(l.data(), static_cast<int32_t>(l.size()), {}).id);
  }
  return seen;
}

TEST(Sampler, TopKKeepsKBest) {
  SamplingParams p;
  p.top_k = 3;
  std::vector<float> l = {0, 5, 1, 4, 3, 2};
  EXPECT_EQ(support(p, l), (std::set<int32_t>{1, 3, 4}));
}

TEST(Sampler, TopPKeepsSmallestNucleus) {
  SamplingParams p;
  p.top_p = 0.7f;
  // probabilities 0.5, 0.3, 0.15, 0.05 → nucleus {0, 1}
  std::vector<float> l = {std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)};
  EXPECT_EQ(support(p, l), (std::set<int32_t>{0, 1}));
}

TEST(Sampler, MinPDropsUnlikelyTokens) {
  SamplingParams p;
  p.min_p = 0.2f;
  std::vector<float> l = {std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)};
  // threshold 0.1: keeps 0.5, 0.3, 0.15
  EXPECT_EQ(support(p, l), (std::set<int32_t>{0, 1, 2}));
}

TEST(Sampler, LowTemperatureConcentrates) {
  SamplingParams p;
  p.temperature = 0.01f;
  std::vector<float> l = {1.0f, 1.5f, 0.5f};
  EXPECT_EQ(support(p, l, 100), (std::set<int32_t>{1}));
}

TEST(Sampler, RepetitionPenaltyDividesPositiveMultipliesNegative) {
  SamplingParams p;
  p.temperature = 0;
  p.repetition_penalty = 2.0f;
  p.top_logprobs = 3;
  Sampler s(p);
  std::vector<float> l = {4.0f, 3.0f, -1.0f};
  auto t = s.sample(l.data(), 3, {0, 2});
  EXPECT_EQ(t.id, 1);  // 4/2 = 2 < 3
  // penalised logits {2, 3, -2}: top order 1, 0, 2
  EXPECT_EQ(t.top[2].first, 2);
  const double lse = std::log(std::exp(2.0) + std::exp(3.0) + std::exp(-2.0));
  EXPECT_NEAR(t.top[2].second, -2.0 - lse, 1e-5);
}

TEST(Sampler, PresenceAndFrequencyPenaltiesOverWindow) {
  SamplingParams p;
  p.temperature = 0;
  p.presence_penalty = 0.5f;
  p.frequency_penalty = 1.0f;
  p.penalty_last_n = 3;
  Sampler s(p);
  std::vector<float> l = {3.0f, 2.0f, 0.0f};
  // window {0, 0, 1}: token 0 → 3 - 2 - 0.5 = 0.5; token 1 → 2 - 1 - 0.5 = 0.5; tie → id 0
  EXPECT_EQ(s.sample(l.data(), 3, {1, 1, 1, 1, 0, 0, 1}).id, 0);
  // window {0, 0, 0}: token 0 → 3 - 3 - 0.5 = -0.5, token 1 wins
  EXPECT_EQ(s.sample(l.data(), 3, {1, 0, 0, 0}).id, 1);
  // outside the window nothing is penalised
  EXPECT_EQ(s.sample(l.data(), 3, {0, 0, 0, 2, 2, 2}).id, 0);
}

TEST(Sampler, LogitBiasIsAddedBeforeEverythingElse) {
  SamplingParams p;
  p.temperature = 0;
  p.logprobs = true;
  std::vector<float> l = {1.0f, 3.0f, 2.0f};
  p.logit_bias = std::make_shared<const LogitBias>(LogitBias{{1, -100.0f}});
  EXPECT_EQ(Sampler(p).sample(l.data(), 3, {}).id, 2) << "-100 on the argmax: the runner-up";
  p.logit_bias = std::make_shared<const LogitBias>(LogitBias{{0, 100.0f}, {7, 50.0f}});
  auto t = Sampler(p).sample(l.data(), 3, {});
  EXPECT_EQ(t.id, 0) << "+100 forces the token; ids past the vocabulary are skipped";
  EXPECT_NEAR(t.logprob, 0.0, 1e-6) << "logprobs are of the biased logits";
  // Sampled too: +100 leaves the others no mass.
  p.temperature = 1.0f;
  Sampler s(p);
  std::vector<int32_t> history;
  for (int i = 0; i < 50; ++i) EXPECT_EQ(s.sample(l.data(), 3, history).id, 0);
  // A token the constraint excludes stays excluded whatever its bias.
  const std::vector<uint64_t> allowed = {0b110};
  EXPECT_NE(s.sample(l.data(), 3, history, &allowed).id, 0);
  // The logits given are never changed.
  EXPECT_EQ(l, (std::vector<float>{1.0f, 3.0f, 2.0f}));
}

TEST(Sampler, NanAndEmptyDoNotCrash) {
  SamplingParams p;
  Sampler s(p);
  std::vector<float> l = {NAN, 1.0f, NAN};
  EXPECT_EQ(s.sample(l.data(), 3, {}).id, 1);
  EXPECT_EQ(s.sample(l.data(), 0, {}).id, -1);
}

}  // namespace
}  // namespace baton::engine
