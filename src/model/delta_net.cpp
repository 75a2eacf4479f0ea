#include "model/delta_net.h"

#include <algorithm>
#include <cmath>

#include "kernels/simd.h"
#include "model/ops.h"

namespace baton::model {
namespace {

// Channels of the convolution one work item covers.
constexpr int64_t kConvChannels = 64;

float silu(float x) {
  return x / (1.0f + std::exp(-x));
}

float sigmoid(float x) {
  return 1.0f / (1.0f + std::exp(-x));
}

float softplus(float x) {
  return x > 20.0f ? x : std::log(1.0f + std::exp(x));
}

// x / max(|x|, eps) over n floats, in place (the sum of squares in double, in order).
void l2_norm(float* x, int32_t n, float eps) {
  double ss = 0;
  for (int32_t i = 0; i < n; ++i) ss += static_cast<double>(x[i] * x[i]);
  const float scale = 1.0f / std::max(std::sqrt(static_cast<float>(ss)), eps);
  for (int32_t i = 0; i < n; ++i) x[i] *= scale;
}

template <typename F>
void parallel(kernels::ThreadPool* pool, int64_t n, F&& fn) {
  if (pool == nullptr || n < 2) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  pool->parallel_for_dynamic(n, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) fn(i);
  });
}

// Channels [c0, c1) of one sequence: each row's causal convolution over the d_conv - 1 inputs
// before it (from the state while they precede the step) and itself, then SiLU, into out; the
// state then holds the sequence's last d_conv - 1 inputs.
void conv_channels(const float* mixed, float* out, const DeltaNetSeq& sq, const float* taps,
                   int32_t K, int64_t C, int64_t c0, int64_t c1) {
  auto input = [&](int64_t idx, int64_t c) {  // idx: row within the step, < 0 in the state
    return idx < 0 ? sq.conv[(K - 1 + idx) * C + c] : mixed[(sq.row0 + idx) * C + c];
  };
  for (int64_t t = 0; t < sq.n_rows; ++t) {
    for (int64_t c = c0; c < c1; ++c) {
      float sum = 0;
      for (int32_t i = 0; i < K; ++i) sum += input(t + i - (K - 1), c) * taps[c * K + i];
      out[(sq.row0 + t) * C + c] = silu(sum);
    }
  }
  // Checkpoints: the d_conv - 1 inputs before the row that follows each, read before the state
  // below is overwritten.
  for (const auto& cap : sq.captures) {
    for (int64_t c = c0; c < c1; ++c) {
      for (int32_t j = 0; j < K - 1; ++j) cap.conv[j * C + c] = input(cap.rows - (K - 1) + j, c);
    }
  }
  float keep[64];
  for (int64_t c = c0; c < c1; ++c) {
    for (int32_t j = 0; j < K - 1; ++j) keep[j] = input(sq.n_rows - (K - 1) + j, c);
    for (int32_t j = 0; j < K - 1; ++j) sq.conv[j * C + c] = keep[j];
  }
}

// The joint projection's rows hold, per key head, its group of value heads' betas then their
// alphas; value head g * r + j (r value heads per key head) is the j-th of group g.
void split_beta_alpha(const SsmParams& p, const float* ba, int64_t n, float* beta, float* alpha) {
  const int32_t Hv = p.n_v_heads, r = p.n_v_heads / p.n_k_heads;
  for (int64_t t = 0; t < n; ++t) {
    const float* row = ba + t * 2 * Hv;
    for (int32_t g = 0; g < p.n_k_heads; ++g) {
      for (int32_t j = 0; j < r; ++j) {
        beta[t * Hv + g * r + j] = row[2 * g * r + j];
        alpha[t * Hv + g * r + j] = row[2 * g * r + r + j];
      }
    }
  }
}

// The input projections of every row in one hand-out of work.
void project(const DeltaNetWeights& w, const SsmParams& p, const float* xn, int64_t n,
             DeltaNetScratch& s, kernels::ThreadPool* pool) {
  s.mixed.resize(n * p.conv_dim());
  s.z.resize(n * p.value_dim());
  s.beta.resize(n * p.n_v_heads);
  s.alpha.resize(n * p.n_v_heads);
  s.jobs = {{w.qkv, xn, n, s.mixed.data()}, {w.z, xn, n, s.z.data()}};
  const bool joint = w.beta_alpha.rows > 0;
  if (joint) {
    s.beta_alpha.resize(n * 2 * p.n_v_heads);
    s.jobs.push_back({w.beta_alpha, xn, n, s.beta_alpha.data()});
  } else {
    s.jobs.push_back({w.beta, xn, n, s.beta.data()});
    s.jobs.push_back({w.alpha, xn, n, s.alpha.data()});
  }
  kernels::matmul_many(s.jobs.data(), s.jobs.size(), pool);
  if (joint) split_beta_alpha(p, s.beta_alpha.data(), n, s.beta.data(), s.alpha.data());
}

}  // namespace

void delta_net(const DeltaNetWeights& w, const SsmParams& p, float rms_eps, const float* xn,
               int64_t n, const std::vector<DeltaNetSeq>& seqs, float* out, DeltaNetScratch& s,
               kernels::ThreadPool* pool) {
  const int64_t C = p.conv_dim(), V = p.value_dim(), KD = p.key_dim();
  const int32_t S = p.head_dim, Hv = p.n_v_heads, Hk = p.n_k_heads, K = p.d_conv;
  project(w, p, xn, n, s, pool);
  s.qkv.resize(n * C);
  const int64_t chunks = (C + kConvChannels - 1) / kConvChannels;
  parallel(pool, static_cast<int64_t>(seqs.size()) * chunks, [&](int64_t it) {
    const int64_t c0 = (it % chunks) * kConvChannels;
    conv_channels(s.mixed.data(), s.qkv.data(), seqs[it / chunks], w.conv.data(), K, C, c0,
                  std::min(C, c0 + kConvChannels));
  });
  parallel(pool, n, [&](int64_t r) {
    float* row = s.qkv.data() + r * C;
    for (int32_t h = 0; h < 2 * Hk; ++h) l2_norm(row + static_cast<int64_t>(h) * S, S, rms_eps);
    for (int32_t h = 0; h < Hv; ++h) {
      float& a = s.alpha[r * Hv + h];
      a = softplus(a + w.dt_bias[h]) * w.a[h];
      float& b = s.beta[r * Hv + h];
      b = sigmoid(b);
    }
  });
  s.heads.resize(n * V);
  const kernels::SimdLevel level = kernels::active_simd_level();
  const float scale = 1.0f / std::sqrt(static_cast<float>(S));
  parallel(pool, static_cast<int64_t>(seqs.size()) * Hv, [&](int64_t it) {
    const DeltaNetSeq& sq = seqs[it / Hv];
    const int32_t h = static_cast<int32_t>(it % Hv), hk = p.key_head(h);
    const int64_t SS = static_cast<int64_t>(S) * S;
    float* m = sq.matrix + h * SS;
    auto cap = sq.captures.begin();
    for (int64_t r = sq.row0; r < sq.row0 + sq.n_rows; ++r) {
      const float* row = s.qkv.data() + r * C;
      delta_rule_step_at(level, m, row + hk * S, row + KD + hk * S, row + 2 * KD + h * S,
                         s.alpha[r * Hv + h], s.beta[r * Hv + h], scale, S,
                         s.heads.data() + r * V + h * S);
      if (cap != sq.captures.end() && r - sq.row0 + 1 == cap->rows) {
        std::copy(m, m + SS, cap->matrix + h * SS);
        ++cap;
      }
    }
  });
  parallel(pool, n, [&](int64_t r) {
    for (int32_t h = 0; h < Hv; ++h) {
      float* o = s.heads.data() + r * V + h * S;
      const float* z = s.z.data() + r * V + h * S;
      rms_norm(o, w.norm.data(), S, rms_eps, o);
      for (int32_t j = 0; j < S; ++j) o[j] *= silu(z[j]);
    }
  });
  kernels::matmul(w.out, s.heads.data(), n, out, pool);
}

}  // namespace baton::model
