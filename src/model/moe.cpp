#include "model/moe.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "kernels/matmul.h"
#include "model/ops.h"

namespace baton::model {
namespace {

template <typename F>
void for_rows(kernels::ThreadPool* pool, int64_t n, F&& fn) {
  if (pool == nullptr || n < 4) {
    for (int64_t r = 0; r < n; ++r) fn(r);
    return;
  }
  pool->parallel_for(n, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) fn(r);
  });
}

// Softmax over every expert, the k most probable, and (norm_topk) their probabilities divided
// by their sum. Sums run in double in a fixed order.
void softmax_top_k(const MoeParams& p, const float* logits, int32_t* ids, float* weights) {
  const int32_t N = p.n_expert, k = p.n_used;
  // NaN ranks below everything, so the order stays strict (the row's output is NaN anyway).
  auto key = [&](int32_t e) {
    return std::isnan(logits[e]) ? -std::numeric_limits<float>::infinity() : logits[e];
  };
  float mx = -std::numeric_limits<float>::infinity();
  for (int32_t e = 0; e < N; ++e) mx = std::max(mx, key(e));
  thread_local std::vector<float> prob;
  thread_local std::vector<int32_t> order;
  prob.resize(N);
  order.resize(N);
  double sum = 0;
  for (int32_t e = 0; e < N; ++e) {
    prob[e] = std::exp(logits[e] - mx);
    sum += prob[e];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int32_t e = 0; e < N; ++e) prob[e] *= inv;
  // The softmax is monotonic: ranking the logits ranks the probabilities, without the ties
  // that rounding to small probabilities would add.
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
    const float ka = key(a), kb = key(b);
    return ka > kb || (ka == kb && a < b);
  });
  double picked = 0;
  for (int32_t j = 0; j < k; ++j) {
    ids[j] = order[j];
    weights[j] = prob[order[j]];
    picked += weights[j];
  }
  if (p.norm_topk) {
    const float total = static_cast<float>(picked);
    for (int32_t j = 0; j < k; ++j) weights[j] /= total;
  }
}

// The k largest logits (gpt-oss: the router's biased logits), then a softmax over those k alone,
// in rank order. The sum runs in double in rank order.
void top_k_softmax(const MoeParams& p, const float* logits, int32_t* ids, float* weights) {
  const int32_t N = p.n_expert, k = p.n_used;
  auto key = [&](int32_t e) {
    return std::isnan(logits[e]) ? -std::numeric_limits<float>::infinity() : logits[e];
  };
  thread_local std::vector<int32_t> order;
  order.resize(N);
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int32_t a, int32_t b) {
    const float ka = key(a), kb = key(b);
    return ka > kb || (ka == kb && a < b);
  });
  const float mx = logits[order[0]];
  double sum = 0;
  for (int32_t j = 0; j < k; ++j) {
    ids[j] = order[j];
    weights[j] = std::exp(logits[order[j]] - mx);
    sum += weights[j];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int32_t j = 0; j < k; ++j) weights[j] *= inv;
}

// Adds the n-float bias of expert e (biases laid out expert after expert) to y; none if empty.
void add_expert_bias(float* y, const std::vector<float>& bias, int64_t e, int64_t n) {
  if (bias.empty()) return;
  add_inplace(y, bias.data() + e * n, n);
}

// Groups the rows' choices by expert: offset[e] is the first gathered row of expert e, and
// slot[r * k + j] the gathered row holding row r's j-th choice (rows in batch order within an
// expert, which no row's result depends on).
void group_by_expert(const MoeParams& p, int64_t n, MoeScratch& s) {
  const int32_t N = p.n_expert, k = p.n_used;
  s.offset.assign(N + 1, 0);
  for (int64_t i = 0; i < n * k; ++i) ++s.offset[s.ids[i] + 1];
  for (int32_t e = 0; e < N; ++e) s.offset[e + 1] += s.offset[e];
  s.filled.assign(s.offset.begin(), s.offset.end() - 1);
  s.slot.resize(n * k);
  for (int64_t i = 0; i < n * k; ++i) s.slot[i] = s.filled[s.ids[i]]++;
}

// The expert of gathered row i: the last whose first row is <= i.
int64_t expert_of(const MoeScratch& s, int64_t i) {
  return std::upper_bound(s.offset.begin(), s.offset.end(), i) - s.offset.begin() - 1;
}

// The gate and up products of every chosen expert, for its gathered rows: one job per expert
// into fused (gate and up stacked), or gate into hidden and up into up.
void gate_up_jobs(const MoeWeights& w, int64_t E, int64_t F, MoeScratch& s) {
  s.jobs.clear();
  for (size_t e = 0; e + 1 < s.offset.size(); ++e) {
    const int64_t r0 = s.offset[e], rows = s.offset[e + 1] - r0;
    if (rows == 0) continue;
    const float* x = s.xin.data() + r0 * E;
    if (w.gate_up[e].data != nullptr) {
      s.jobs.push_back({w.gate_up[e], x, rows, s.fused.data() + r0 * 2 * F});
    } else {
      s.jobs.push_back({w.gate[e], x, rows, s.hidden.data() + r0 * F});
      s.jobs.push_back({w.up[e], x, rows, s.up.data() + r0 * F});
    }
  }
}

}  // namespace

void route_experts(const MoeParams& p, const float* logits, int32_t* ids, float* weights) {
  switch (p.gating) {
    case ExpertGating::SoftmaxTopK:
      softmax_top_k(p, logits, ids, weights);
      return;
    case ExpertGating::TopKSoftmax:
      top_k_softmax(p, logits, ids, weights);
      return;
  }
}

void moe_ffn(const MoeWeights& w, const MoeParams& p, int64_t n_embd, const float* xn, int64_t n,
             float* out, MoeScratch& s, kernels::ThreadPool* pool) {
  const int64_t E = n_embd, F = p.n_ff, N = p.n_expert, k = p.n_used;
  s.logits.resize(n * N);
  s.ids.resize(n * k);
  s.weights.resize(n * k);
  kernels::matmul(w.router, xn, n, s.logits.data(), pool);
  for_rows(pool, n, [&](int64_t r) {
    add_expert_bias(s.logits.data() + r * N, w.router_bias, 0, N);
    route_experts(p, s.logits.data() + r * N, s.ids.data() + r * k, s.weights.data() + r * k);
  });
  group_by_expert(p, n, s);
  const int64_t g = n * k;
  s.xin.resize(g * E);
  s.hidden.resize(g * F);
  s.yout.resize(g * E);
  s.fused.resize(g * 2 * F);
  s.up.resize(g * F);
  for_rows(pool, n, [&](int64_t r) {
    for (int64_t j = 0; j < k; ++j) {
      std::copy(xn + r * E, xn + (r + 1) * E, s.xin.data() + s.slot[r * k + j] * E);
    }
  });
  // Only the experts some row chose are read, each once for all of its rows; all experts' tiles
  // go to the threads in one hand-out per product.
  gate_up_jobs(w, E, F, s);
  kernels::matmul_many(s.jobs.data(), s.jobs.size(), pool);
  for_rows(pool, g, [&](int64_t i) {
    const int64_t e = expert_of(s, i);
    const bool fused = w.gate_up[e].data != nullptr;
    float* gate = fused ? s.fused.data() + i * 2 * F : s.hidden.data() + i * F;
    float* up = fused ? gate + F : s.up.data() + i * F;
    add_expert_bias(gate, w.gate_bias, e, F);
    add_expert_bias(up, w.up_bias, e, F);
    if (p.act == ExpertAct::SwigluOai) {
      swiglu_oai(gate, up, F, p.swiglu_alpha, p.swiglu_limit);
    } else {
      silu_mul(gate, up, F);
    }
    if (fused) std::copy(gate, gate + F, s.hidden.data() + i * F);
  });
  s.jobs.clear();
  for (int32_t e = 0; e < N; ++e) {
    const int64_t r0 = s.offset[e], rows = s.offset[e + 1] - r0;
    if (rows == 0) continue;
    s.jobs.push_back({w.down[e], s.hidden.data() + r0 * F, rows, s.yout.data() + r0 * E});
  }
  kernels::matmul_many(s.jobs.data(), s.jobs.size(), pool);
  if (!w.down_bias.empty()) {
    for_rows(pool, g, [&](int64_t i) {
      add_expert_bias(s.yout.data() + i * E, w.down_bias, expert_of(s, i), E);
    });
  }
  for_rows(pool, n, [&](int64_t r) {
    float* o = out + r * E;
    const float* wr = s.weights.data() + r * k;
    const float* y0 = s.yout.data() + s.slot[r * k] * E;
    for (int64_t i = 0; i < E; ++i) o[i] = wr[0] * y0[i];
    for (int64_t j = 1; j < k; ++j) {
      const float* y = s.yout.data() + s.slot[r * k + j] * E;
      for (int64_t i = 0; i < E; ++i) o[i] += wr[j] * y[i];
    }
  });
}

}  // namespace baton::model
