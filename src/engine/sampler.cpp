#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

namespace baton::engine {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr float kLowestAllowed = -1e30f;

// Higher logit first; the lower id wins a tie so greedy and truncation are reproducible.
struct ByLogit {
  const std::vector<float>& l;
  bool operator()(int32_t a, int32_t b) const { return l[a] != l[b] ? l[a] > l[b] : a < b; }
};

int32_t argmax(const std::vector<float>& l) {
  int32_t best = 0;
  for (int32_t i = 1; i < static_cast<int32_t>(l.size()); ++i) {
    if (l[i] > l[best]) best = i;
  }
  return best;
}

}  // namespace

Sampler::Sampler(const SamplingParams& p) : p_(p), rng_(p.seed) {}

void Sampler::apply_penalties(std::vector<float>& l, const std::vector<int32_t>& history) const {
  const bool any =
      p_.repetition_penalty != 1.0f || p_.presence_penalty != 0.0f || p_.frequency_penalty != 0.0f;
  if (!any || p_.penalty_last_n == 0 || history.empty()) return;
  size_t window = history.size();
  if (p_.penalty_last_n > 0) window = std::min(window, static_cast<size_t>(p_.penalty_last_n));
  std::map<int32_t, int32_t> counts;
  for (size_t i = history.size() - window; i < history.size(); ++i) ++counts[history[i]];
  const float rp = p_.repetition_penalty > 0 ? p_.repetition_penalty : 1.0f;
  for (const auto& [tok, n] : counts) {
    if (tok < 0 || tok >= static_cast<int32_t>(l.size())) continue;
    float& v = l[tok];
    v = v > 0 ? v / rp : v * rp;
    v -= static_cast<float>(n) * p_.frequency_penalty + p_.presence_penalty;
  }
}

int32_t Sampler::draw(const std::vector<float>& l) {
  std::vector<int32_t> idx;
  idx.reserve(l.size());
  for (int32_t i = 0; i < static_cast<int32_t>(l.size()); ++i) {
    if (l[i] != kNegInf) idx.push_back(i);
  }
  if (idx.empty()) return argmax(l);
  ByLogit cmp{l};
  if (p_.top_k > 0 && static_cast<size_t>(p_.top_k) < idx.size()) {
    std::partial_sort(idx.begin(), idx.begin() + p_.top_k, idx.end(), cmp);
    idx.resize(p_.top_k);
  } else {
    std::sort(idx.begin(), idx.end(), cmp);
  }
  const float top = l[idx[0]];
  std::vector<double> prob(idx.size());
  double sum = 0;
  for (size_t i = 0; i < idx.size(); ++i) sum += prob[i] = std::exp(double(l[idx[i]]) - top);
  size_t keep = idx.size();
  if (p_.top_p < 1.0f) {
    double cum = 0;
    for (size_t i = 0; i < keep; ++i) {
      cum += prob[i] / sum;
      if (cum >= p_.top_p) {
        keep = i + 1;
        break;
      }
    }
  }
  if (p_.min_p > 0.0f) {
    // prob[0] is the largest (== 1 before normalisation), so the kept set is a prefix.
    size_t k = 1;
    while (k < keep && prob[k] >= p_.min_p * prob[0]) ++k;
    keep = k;
  }
  double total = 0;
  std::vector<double> w(keep);
  for (size_t i = 0; i < keep; ++i) {
    total += w[i] = std::exp((double(l[idx[i]]) - top) / p_.temperature);
  }
  const double u = rng_.uniform() * total;
  double cum = 0;
  for (size_t i = 0; i < keep; ++i) {
    cum += w[i];
    if (u < cum) return idx[i];
  }
  return idx[keep - 1];
}

SampledToken Sampler::sample(const float* logits, int32_t n_vocab,
                             const std::vector<int32_t>& history,
                             const std::vector<uint64_t>* allowed) {
  SampledToken out;
  if (n_vocab <= 0) return out;
  std::vector<float> l(logits, logits + n_vocab);
  for (auto& v : l) {
    if (std::isnan(v)) v = kNegInf;  // a broken logit must not be picked or poison the sums
  }
  if (allowed) {
    bool any = false;
    for (int32_t i = 0; i < n_vocab; ++i) {
      const size_t w = static_cast<size_t>(i) >> 6;
      const bool ok = w < allowed->size() && (((*allowed)[w] >> (i & 63)) & 1);
      if (!ok) {
        l[i] = kNegInf;
      } else if (l[i] == kNegInf) {
        l[i] = kLowestAllowed;  // still drawable when every allowed token is this unlikely
      }
      any |= ok;
    }
    if (!any) return out;
  }
  apply_penalties(l, history);
  const float mx = l[argmax(l)];
  double se = 0;
  for (float v : l) se += std::exp(double(v) - mx);
  const double lse = mx + std::log(se);
  out.id = p_.temperature <= 0.0f || !std::isfinite(mx) ? argmax(l) : draw(l);
  out.logprob = static_cast<float>(l[out.id] - lse);
  const int32_t n_top = std::clamp(p_.top_logprobs, 0, std::min(20, n_vocab));
  if (n_top > 0) {
    std::vector<int32_t> idx(n_vocab);
    std::iota(idx.begin(), idx.end(), 0);
    std::partial_sort(idx.begin(), idx.begin() + n_top, idx.end(), ByLogit{l});
    for (int32_t i = 0; i < n_top; ++i) {
      out.top.emplace_back(idx[i], static_cast<float>(l[idx[i]] - lse));
    }
  }
  return out;
}

}  // namespace baton::engine
