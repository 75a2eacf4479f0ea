#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/sampler_ops.h"

namespace baton::engine {
namespace {

using sampler_ops::Item;
using sampler_ops::kNegInf;

constexpr float kLowestAllowed = -1e30f;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Buffers reused from call to call. Each call writes them before reading, so they carry nothing
// from one call to the next and a request's tokens depend only on its own sampler. They belong
// to the thread, not the Sampler, so that the many requests a server holds (running and parked)
// do not each keep vocabulary-sized buffers.
struct Scratch {
  std::vector<float> logits;    // the logits under a mask or penalties
  std::vector<int32_t> window;  // the penalty window, sorted
  std::vector<Item> items;      // top-k or top_logprobs, or the band a top-p cut runs through
  sampler_ops::Head head;       // the candidates of a truncated draw
  std::vector<double> blocks;   // partial sums of a whole-vocabulary draw
};

Scratch& scratch() {
  thread_local Scratch s;
  return s;
}

bool penalties_apply(const SamplingParams& p, const std::vector<int32_t>& history) {
  const bool any =
      p.repetition_penalty != 1.0f || p.presence_penalty != 0.0f || p.frequency_penalty != 0.0f;
  return any && p.penalty_last_n != 0 && !history.empty();
}

// out = in where allowed, -inf elsewhere; false when nothing is allowed.
bool mask_logits(const float* in, int32_t n, const std::vector<uint64_t>& allowed, float* out) {
  bool any = false;
  for (int32_t b = 0; b < n; b += 64) {
    const int32_t len = std::min(64, n - b);
    const size_t word = static_cast<size_t>(b) >> 6;
    uint64_t bits = word < allowed.size() ? allowed[word] : 0;
    if (len < 64) bits &= (uint64_t{1} << len) - 1;
    if (bits == 0) {
      std::fill(out + b, out + b + len, kNegInf);
      continue;
    }
    any = true;
    for (int32_t i = 0; i < len; ++i) {
      const float x = in[b + i];
      // An allowed -inf (or NaN) stays drawable for when every allowed token is that unlikely.
      out[b + i] = (bits >> i) & 1 ? (x > kNegInf ? x : kLowestAllowed) : kNegInf;
    }
  }
  return any;
}

// Repetition, frequency and presence penalties, on the tokens of the window only.
void apply_penalties(const SamplingParams& p, const std::vector<int32_t>& history, float* l,
                     int32_t n, std::vector<int32_t>& window) {
  size_t len = history.size();
  if (p.penalty_last_n > 0) len = std::min(len, static_cast<size_t>(p.penalty_last_n));
  window.assign(history.end() - static_cast<std::ptrdiff_t>(len), history.end());
  std::sort(window.begin(), window.end());
  const float rp = p.repetition_penalty > 0 ? p.repetition_penalty : 1.0f;
  for (size_t i = 0, j = 0; i < window.size(); i = j) {
    while (j < window.size() && window[j] == window[i]) ++j;
    const int32_t tok = window[i];
    if (tok < 0 || tok >= n) continue;
    float& v = l[tok];
    v = v > 0 ? v / rp : v * rp;
    v -= static_cast<float>(j - i) * p.frequency_penalty + p.presence_penalty;
  }
}

// A masked-out token (-inf) stays out whatever its bias.
void apply_bias(const LogitBias& bias, float* l, int32_t n) {
  for (const auto& [id, b] : bias) {
    if (id >= 0 && id < n) l[id] += b;
  }
}

// Distances from the largest logit that bound the bands gather_head takes, widening by about
// 1.3: each band costs a pass over the vocabulary, and only the last one is put in order.
constexpr float kBands[] = {1, 1.5, 2, 2.5, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 32, 48, 64};

// Keeps the smallest best prefix of band [start, head.size) whose weight reaches target.
void cut_band(sampler_ops::Head& h, size_t start, double target, std::vector<Item>& items) {
  items.clear();
  for (size_t i = start; i < h.size; ++i) items.push_back({h.v[i], h.id[i], h.w[i]});
  const size_t keep = sampler_ops::nucleus(items, target);
  h.size = start;
  for (size_t i = 0; i < keep; ++i) h.push(items[i].value, items[i].id, items[i].w);
}

// The head of the distribution into s.head (w at temperature 1): band by band down from the
// max until the gathered weight reaches target, which puts the top-p nucleus inside (what was
// gathered is a prefix of the sorted order) and cuts it in the last band; or, without a target,
// every token down to floor, below which min_p drops everything.
void gather_head(const float* l, int32_t n, float mx, double target, float floor, Scratch& s) {
  auto& h = s.head;
  h.clear_for(n);
  double mass = 0;
  float hi = std::numeric_limits<float>::infinity();
  for (size_t b = 0;; ++b) {
    float lo = mx - kBands[b];
    const bool last = std::isinf(target) || lo <= floor || b + 1 == std::size(kBands);
    if (last) lo = std::max(floor, std::numeric_limits<float>::lowest());
    const size_t start = h.size;
    sampler_ops::gather(l, n, lo, hi, h);
    sampler_ops::weigh(h, start, h.size, mx, 1.0f);
    double band = 0;
    for (size_t i = start; i < h.size; ++i) band += h.w[i];
    if (mass + band >= target) return cut_band(h, start, target - mass, s.items);
    if (last) return;
    mass += band;
    hi = lo;
  }
}

// min_p, relative to the largest weight (1): keeps the candidates with w >= min_p, or the best
// one alone when min_p > 1 leaves none.
void apply_min_p(sampler_ops::Head& h, float min_p) {
  size_t best = 0;
  for (size_t i = 1; i < h.size; ++i) {
    if (h.v[i] > h.v[best] || (h.v[i] == h.v[best] && h.id[i] < h.id[best])) best = i;
  }
  const Item top{h.v[best], h.id[best], h.w[best]};
  size_t k = 0;
  for (size_t i = 0; i < h.size; ++i) {
    h.v[k] = h.v[i], h.id[k] = h.id[i], h.w[k] = h.w[i];
    k += h.w[i] >= min_p;
  }
  h.size = k;
  if (k == 0) h.push(top.value, top.id, top.w);
}

// What top-k, top-p and min-p keep, into s.head with w at temperature 1. z1 receives the
// vocabulary's Σ e^(l - mx) when top-p needed it.
void truncate(const SamplingParams& p, const float* l, int32_t n, float mx, Scratch& s,
              double& z1) {
  double target = std::numeric_limits<double>::infinity();
  if (p.top_k > 0 && p.top_k < n) {
    auto& items = s.items;
    sampler_ops::top_k(l, n, p.top_k, false, items);
    double sum = 0;
    for (auto& it : items) sum += it.w = sampler_ops::weight(it.value, mx, 1.0f);
    if (p.top_p < 1.0f) target = p.top_p * sum;  // top-p within what top-k kept
    const size_t keep = std::isinf(target) ? items.size() : sampler_ops::nucleus(items, target);
    s.head.clear_for(static_cast<int32_t>(keep));
    for (size_t i = 0; i < keep; ++i) s.head.push(items[i].value, items[i].id, items[i].w);
  } else {
    if (p.top_p < 1.0f) {
      z1 = sampler_ops::exp_sum(l, n, mx, 1.0f, nullptr);
      target = p.top_p * z1;
    }
    // Tokens whose weight is below min_p lie below this floor (with room for rounding).
    const float floor = p.min_p > 0.0f ? mx + (std::log(p.min_p) - 1e-3f) - std::abs(mx) * 1e-6f
                                       : -std::numeric_limits<float>::infinity();
    gather_head(l, n, mx, target, floor, s);
  }
  if (p.min_p > 0.0f) apply_min_p(s.head, p.min_p);
}

// The sampled token's logprob and the top_logprobs alternatives, under the softmax of l.
void add_logprobs(const SamplingParams& p, const float* l, int32_t n, float mx, double z1,
                  SampledToken& out) {
  if (std::isnan(z1)) z1 = sampler_ops::exp_sum(l, n, mx, 1.0f, nullptr);
  const double log_z = std::log(z1);
  const auto logprob = [&](float v) {
    return static_cast<float>((static_cast<double>(v > kNegInf ? v : kNegInf) - mx) - log_z);
  };
  out.logprob = logprob(l[out.id]);
  const int32_t n_top = std::clamp(p.top_logprobs, 0, std::min(20, n));
  if (n_top == 0) return;
  auto& items = scratch().items;
  sampler_ops::top_k(l, n, n_top, true, items);
  out.top.reserve(n_top);
  for (const auto& it : items) out.top.emplace_back(it.id, logprob(it.value));
}

}  // namespace

Sampler::Sampler(const SamplingParams& p) : p_(p), rng_(p.seed) {}

int32_t Sampler::draw(const float* l, int32_t n, float mx, int32_t best_id, double& z1) {
  Scratch& s = scratch();
  const float inv_t = 1.0f / p_.temperature;
  if (!(p_.top_k > 0 && p_.top_k < n) && !(p_.top_p < 1.0f) && !(p_.min_p > 0.0f)) {
    // No truncation: one pass of weights with partial sums per block, then a walk to the block
    // the draw falls in and through that block alone. Drawing in id order rather than sorted
    // order changes which token a given number picks, not the distribution.
    s.blocks.resize((n + sampler_ops::kBlock - 1) / sampler_ops::kBlock);
    const double total = sampler_ops::exp_sum(l, n, mx, inv_t, s.blocks.data());
    if (inv_t == 1.0f) z1 = total;
    const int32_t id =
        sampler_ops::draw_by_blocks(l, n, mx, inv_t, s.blocks.data(), rng_.uniform() * total);
    return id >= 0 ? id : best_id;
  }
  truncate(p_, l, n, mx, s, z1);
  auto& h = s.head;
  if (inv_t != 1.0f) sampler_ops::weigh(h, 0, h.size, mx, inv_t);
  double total = 0;
  for (size_t i = 0; i < h.size; ++i) total += h.w[i];
  const double u = rng_.uniform() * total;
  double cum = 0;
  for (size_t i = 0; i < h.size; ++i) {
    cum += h.w[i];
    if (u < cum) return h.id[i];
  }
  return h.size > 0 ? h.id[h.size - 1] : best_id;
}

SampledToken Sampler::sample(const float* logits, int32_t n_vocab,
                             const std::vector<int32_t>& history,
                             const std::vector<uint64_t>* allowed) {
  SampledToken out;
  if (n_vocab <= 0) return out;
  const float* l = logits;
  const bool penalise = penalties_apply(p_, history);
  const bool bias = p_.logit_bias && !p_.logit_bias->empty();
  if (allowed || penalise || bias) {
    // Only a mask, a bias or penalties need a copy; otherwise every pass reads the logits as
    // given.
    Scratch& s = scratch();
    s.logits.resize(n_vocab);
    if (!allowed) {
      std::copy(logits, logits + n_vocab, s.logits.begin());
    } else if (!mask_logits(logits, n_vocab, *allowed, s.logits.data())) {
      return out;
    }
    if (bias) apply_bias(*p_.logit_bias, s.logits.data(), n_vocab);
    if (penalise) apply_penalties(p_, history, s.logits.data(), n_vocab, s.window);
    l = s.logits.data();
  }
  const auto best = sampler_ops::argmax(l, n_vocab);
  double z1 = kNaN;
  const bool greedy = p_.temperature <= 0.0f || !std::isfinite(best.value);
  out.id = greedy ? best.id : draw(l, n_vocab, best.value, best.id, z1);
  if (p_.logprobs || p_.top_logprobs > 0) add_logprobs(p_, l, n_vocab, best.value, z1, out);
  return out;
}

}  // namespace baton::engine
