// The sampler against brute-force references: a full sort in double precision, as the sampler
// was first written, so every shortcut it takes (argmax pass, heap top-k, banded top-p, float
// exp) is checked for the tokens and probabilities it must give.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include "engine/rng.h"
#include "engine/sampler.h"
#include "engine/sampler_ops.h"

namespace baton::engine {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> gaussian(int32_t n, uint64_t seed, double sd, bool ties = false) {
  Rng rng(seed);
  std::vector<float> l(n);
  for (auto& v : l) {
    const double u1 = rng.uniform() + 1e-12, u2 = rng.uniform();
    v = static_cast<float>(sd * std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307 * u2));
    if (ties) v = std::round(v * 2) / 2;  // many equal logits, the max among them
  }
  return l;
}

// Penalties as the reference applies them: over a std::map of the window's counts.
std::vector<double> penalised(std::vector<float> l, const SamplingParams& p,
                              const std::vector<int32_t>& history) {
  std::map<int32_t, int32_t> counts;
  const size_t w =
      p.penalty_last_n < 0 ? history.size() : std::min(history.size(), size_t(p.penalty_last_n));
  for (size_t i = history.size() - w; i < history.size(); ++i) ++counts[history[i]];
  for (const auto& [t, c] : counts) {
    float& v = l[t];
    v = v > 0 ? v / p.repetition_penalty : v * p.repetition_penalty;
    v -= static_cast<float>(c) * p.frequency_penalty + p.presence_penalty;
  }
  return {l.begin(), l.end()};
}

std::vector<int32_t> sorted_ids(const std::vector<double>& l) {
  std::vector<int32_t> idx(l.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int32_t a, int32_t b) { return l[a] > l[b]; });
  return idx;
}

// The tokens top-k → top-p → min-p may return, computed in double over a full sort.
std::set<int32_t> allowed_set(const std::vector<double>& l, const SamplingParams& p) {
  auto idx = sorted_ids(l);
  if (p.top_k > 0 && size_t(p.top_k) < idx.size()) idx.resize(p.top_k);
  std::vector<double> prob;
  double sum = 0;
  for (int32_t i : idx) sum += prob.emplace_back(std::exp(l[i] - l[idx[0]]));
  size_t keep = idx.size();
  double cum = 0;
  for (size_t i = 0; p.top_p < 1.0f && i < idx.size(); ++i) {
    if ((cum += prob[i] / sum) >= p.top_p) {
      keep = i + 1;
      break;
    }
  }
  std::set<int32_t> out;
  for (size_t i = 0; i < keep; ++i) {
    if (i == 0 || prob[i] >= p.min_p) out.insert(idx[i]);
  }
  return out;
}

TEST(SamplerReference, ExpNegIsCloseToExp) {
  for (float x = -87.0f; x <= 0.0f; x += 0.0137f) {
    EXPECT_NEAR(sampler_ops::exp_neg(x) / std::exp(double(x)), 1.0, 3e-7) << x;
  }
  EXPECT_EQ(sampler_ops::exp_neg(0.0f), 1.0f);
  EXPECT_EQ(sampler_ops::exp_neg(-88.0f), 0.0f);
  EXPECT_EQ(sampler_ops::exp_neg(-kInf), 0.0f);
  EXPECT_EQ(sampler_ops::exp_neg(NAN), 0.0f);
}

TEST(SamplerReference, GreedyIsTheFirstArgmax) {
  SamplingParams p;
  p.temperature = 0;
  for (int32_t n : {1, 2, 63, 64, 65, 1000, 32007}) {
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      auto l = gaussian(n, seed * 977 + n, 3.0, seed % 2 == 0);
      if (seed == 3) l[n / 2] = 1e30f, l[n - 1] = 1e30f;              // extremes, tied
      if (seed == 5) std::fill(l.begin(), l.begin() + n / 3, -kInf);  // a masked stretch
      const int32_t want = int32_t(std::max_element(l.begin(), l.end()) - l.begin());
      Sampler s(p);
      EXPECT_EQ(s.sample(l.data(), n, {}).id, want) << "n " << n << " seed " << seed;
    }
  }
  std::vector<float> all_neg_inf(100, -kInf);
  EXPECT_EQ(Sampler(p).sample(all_neg_inf.data(), 100, {}).id, 0);
}

TEST(SamplerReference, GreedyWithPenaltiesAndMaskMatchesReference) {
  SamplingParams p;
  p.temperature = 0;
  p.repetition_penalty = 1.3f;
  p.frequency_penalty = 0.4f;
  p.presence_penalty = 0.2f;
  p.penalty_last_n = 16;
  const int32_t n = 5000;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    auto l = gaussian(n, seed, 2.0, true);
    Rng rng(seed);
    std::vector<int32_t> history(40);
    // Most history tokens among the best ones, so the penalties change the answer.
    const auto order = sorted_ids({l.begin(), l.end()});
    for (auto& t : history) t = order[rng.next() % 6];
    std::vector<uint64_t> mask((n + 63) / 64, ~uint64_t{0});
    mask[order[0] / 64] &= ~(uint64_t{1} << (order[0] % 64));  // the raw best is not allowed
    auto ref = penalised(l, p, history);
    ref[order[0]] = -kInf;
    const int32_t want = int32_t(std::max_element(ref.begin(), ref.end()) - ref.begin());
    Sampler s(p);
    EXPECT_EQ(s.sample(l.data(), n, history, &mask).id, want) << seed;
  }
}

TEST(SamplerReference, TruncatedDrawsStayInsideTheReferenceSet) {
  struct Case {
    int32_t k;
    float p, min_p, t;
  };
  const Case cases[] = {{40, 1, 0, 0.8f},   {40, 0.95f, 0, 0.8f}, {0, 0.9f, 0, 1},
                        {0, 0.5f, 0, 1.3f}, {0, 1, 0.05f, 1},     {0, 0.95f, 0.1f, 0.7f},
                        {7, 0.8f, 0.2f, 1}, {0, 0.0f, 0, 1},      {3000, 0.99f, 0, 1}};
  for (int32_t n : {300, 32000}) {
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      const auto l = gaussian(n, seed * 31 + n, seed % 3 == 0 ? 1.0 : 3.0, seed == 4);
      for (const auto& c : cases) {
        SamplingParams p;
        p.top_k = c.k, p.top_p = c.p, p.min_p = c.min_p, p.temperature = c.t, p.seed = seed;
        const auto allowed = allowed_set({l.begin(), l.end()}, p);
        Sampler s(p);
        for (int i = 0; i < 40; ++i) {
          const int32_t id = s.sample(l.data(), n, {}).id;
          ASSERT_TRUE(allowed.count(id)) << "n " << n << " seed " << seed << " k " << c.k << " p "
                                         << c.p << " min_p " << c.min_p << " id " << id;
        }
      }
    }
  }
}

TEST(SamplerReference, DrawsFollowTheSoftmax) {
  // Ten likely tokens spread over several 256-token blocks of a 1000-token vocabulary, the rest
  // in one bucket: the whole-vocabulary draw, then top-p (which cuts inside the ten) and top-k.
  std::vector<float> l(1000, -6.0f);
  for (int i = 0; i < 10; ++i) l[i * 97 + 5] = 0.3f * float(i);
  const auto bucket = [](int32_t id) { return id % 97 == 5 && id / 97 < 10 ? id / 97 : 10; };
  for (int mode = 0; mode < 3; ++mode) {
    SamplingParams p;
    p.temperature = 0.7f;
    p.top_p = mode == 1 ? 0.9f : 1.0f;
    p.top_k = mode == 2 ? 6 : 0;
    p.seed = 99;
    const auto kept = allowed_set({l.begin(), l.end()}, p);
    std::vector<double> prob(11, 0);
    double z = 0;
    for (int32_t i : kept) z += std::exp(l[i] / 0.7);
    for (int32_t i : kept) prob[bucket(i)] += std::exp(l[i] / 0.7) / z;
    std::vector<int> count(11, 0);
    Sampler s(p);
    const int draws = 20000;
    for (int d = 0; d < draws; ++d) ++count[bucket(s.sample(l.data(), 1000, {}).id)];
    double chi = 0;
    int dof = -1;
    for (int b = 0; b < 11; ++b) {
      if (prob[b] == 0) {
        EXPECT_EQ(count[b], 0) << "mode " << mode << " bucket " << b;
        continue;
      }
      const double e = prob[b] * draws;
      chi += (count[b] - e) * (count[b] - e) / e;
      ++dof;
    }
    // At most 10 degrees of freedom: 40 is beyond the 0.9999 quantile.
    EXPECT_LT(chi, 40.0) << "mode " << mode << " dof " << dof;
    EXPECT_GE(dof, 5);
  }
}

TEST(SamplerReference, LogprobsMatchTheLogSoftmax) {
  for (int32_t n : {1000, 32000}) {
    for (const float t : {0.0f, 0.9f}) {
      const auto l = gaussian(n, n + 5, 3.0);
      SamplingParams p;
      p.temperature = t;
      p.top_k = t > 0 ? 50 : 0;
      p.logprobs = true;
      p.top_logprobs = 20;
      Sampler s(p);
      const auto tok = s.sample(l.data(), n, {});
      const double mx = *std::max_element(l.begin(), l.end());
      double z = 0;
      for (float v : l) z += std::exp(v - mx);
      const auto lp = [&](int32_t id) { return l[id] - mx - std::log(z); };
      EXPECT_NEAR(tok.logprob, lp(tok.id), 1e-5);
      const auto order = sorted_ids({l.begin(), l.end()});
      ASSERT_EQ(tok.top.size(), 20u);
      for (size_t i = 0; i < 20; ++i) {
        EXPECT_EQ(tok.top[i].first, order[i]);
        EXPECT_NEAR(tok.top[i].second, lp(order[i]), 1e-5);
      }
    }
  }
}

TEST(SamplerReference, PenalisedLogprobsMatchReference) {
  SamplingParams p;
  p.temperature = 0;
  p.repetition_penalty = 1.2f;
  p.frequency_penalty = 0.3f;
  p.presence_penalty = -0.5f;
  p.penalty_last_n = -1;  // the whole history
  p.top_logprobs = 20;
  const auto l = gaussian(3000, 17, 2.0);
  const auto order = sorted_ids({l.begin(), l.end()});
  std::vector<int32_t> history;
  for (int i = 0; i < 30; ++i) history.push_back(order[i % 12]);
  const auto ref = penalised(l, p, history);
  const double mx = *std::max_element(ref.begin(), ref.end());
  double z = 0;
  for (double v : ref) z += std::exp(v - mx);
  const auto want = sorted_ids(ref);
  const auto tok = Sampler(p).sample(l.data(), 3000, history);
  EXPECT_EQ(tok.id, want[0]);
  for (size_t i = 0; i < 20; ++i) {
    EXPECT_EQ(tok.top[i].first, want[i]);
    EXPECT_NEAR(tok.top[i].second, ref[want[i]] - mx - std::log(z), 1e-5);
  }
}

TEST(SamplerReference, SameSeedSameTokensOnEveryPath) {
  const auto l = gaussian(32000, 3, 3.0);
  const SamplingParams base;
  std::vector<SamplingParams> ps(5, base);
  ps[1].top_k = 40, ps[1].top_p = 0.95f, ps[1].temperature = 0.8f;
  ps[2].top_p = 0.9f;
  ps[3].min_p = 0.05f;
  ps[4].repetition_penalty = 1.1f, ps[4].top_p = 0.95f;
  for (const auto& p : ps) {
    Sampler a(p), b(p);
    std::vector<int32_t> ha, hb;
    for (int i = 0; i < 30; ++i) ha.push_back(a.sample(l.data(), 32000, ha).id);
    // A copy taken mid-way (a parked request's sampler) goes on exactly as the original.
    Sampler c = a;
    for (int i = 0; i < 30; ++i) hb.push_back(b.sample(l.data(), 32000, hb).id);
    EXPECT_EQ(ha, hb);
    auto hc = ha;
    for (int i = 0; i < 10; ++i) {
      const int32_t x = a.sample(l.data(), 32000, ha).id;
      ha.push_back(x);
      hc.push_back(c.sample(l.data(), 32000, hc).id);
    }
    EXPECT_EQ(ha, hc);
    EXPECT_GT(std::set<int32_t>(ha.begin(), ha.end()).size(), 5u);
  }
}

TEST(SamplerReference, MaskedDrawsStayInTheMask) {
  const int32_t n = 2000;
  auto l = gaussian(n, 8, 3.0);
  std::vector<uint64_t> mask((n + 63) / 64, 0);
  std::set<int32_t> ok;
  for (int32_t i = 7; i < n; i += 131) mask[i / 64] |= uint64_t{1} << (i % 64), ok.insert(i);
  l[7] = NAN;  // allowed but broken: stays drawable, last of all
  SamplingParams p;
  p.top_p = 0.99f;
  Sampler s(p);
  for (int i = 0; i < 200; ++i) EXPECT_TRUE(ok.count(s.sample(l.data(), n, {}, &mask).id));
  for (int32_t i : ok) l[i] = -kInf;  // every allowed token impossible: still one of them
  EXPECT_TRUE(ok.count(s.sample(l.data(), n, {}, &mask).id));
}

}  // namespace
}  // namespace baton::engine
