#include "sched/cost_model.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace baton::sched {

namespace {

constexpr size_t kTerms = 4;
using Vec = std::array<double, kTerms>;
using Mat = std::array<Vec, kTerms>;

// Solves A x = b over the terms in `active` (the others are 0) by Gaussian elimination with
// partial pivoting. False when the system is singular there.
bool solve(Mat a, Vec b, const std::array<bool, kTerms>& active, Vec& x) {
  std::array<size_t, kTerms> idx{};
  size_t n = 0;
  for (size_t i = 0; i < kTerms; ++i) {
    if (active[i]) idx[n++] = i;
  }
  std::array<std::array<double, kTerms + 1>, kTerms> m{};
  for (size_t r = 0; r < n; ++r) {
    for (size_t c = 0; c < n; ++c) m[r][c] = a[idx[r]][idx[c]];
    m[r][n] = b[idx[r]];
  }
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < n; ++r) {
      if (std::fabs(m[r][col]) > std::fabs(m[pivot][col])) pivot = r;
    }
    if (std::fabs(m[pivot][col]) < 1e-12) return false;
    std::swap(m[col], m[pivot]);
    for (size_t r = 0; r < n; ++r) {
      if (r == col) continue;
      const double f = m[r][col] / m[col][col];
      for (size_t c = col; c <= n; ++c) m[r][c] -= f * m[col][c];
    }
  }
  x = {};
  for (size_t r = 0; r < n; ++r) x[idx[r]] = m[r][n] / m[r][r];
  return true;
}

}  // namespace

double attention_kpairs(int32_t start, int32_t n) {
  if (n <= 0) return 0;
  const double s = start, k = n;
  return (k * s + k * (k + 1) / 2) / 1000.0;
}

void StepShape::add_prefill(int32_t start, int32_t n) {
  prefill_tokens += std::max(0, n);
  kpairs += attention_kpairs(start, n);
}

void StepShape::add_decode(int32_t start) {
  ++decode_rows;
  kpairs += attention_kpairs(start, 1);
}

double CostModel::predict_ms(const StepShape& s) const {
  return ms_fixed + ms_per_decode_row * s.decode_rows + ms_per_prefill_token * s.prefill_tokens +
         ms_per_kpair * s.kpairs;
}

int32_t CostModel::largest_chunk(const StepShape& base, int32_t depth, double limit_ms, int32_t lo,
                                 int32_t hi) const {
  auto fits = [&](int32_t n) {
    StepShape s = base;
    s.add_prefill(depth, n);
    return predict_ms(s) * std::max(1.0, overshoot) <= limit_ms;
  };
  if (hi <= lo || !fits(lo)) return lo;
  if (fits(hi)) return hi;
  // fits(lo) and not fits(hi); the cost grows with n, so bisect.
  while (hi - lo > 1) {
    const int32_t mid = lo + (hi - lo) / 2;
    (fits(mid) ? lo : hi) = mid;
  }
  return lo;
}

void CostEstimator::observe(const StepShape& s, double ms) {
  if (ms <= 0 || (s.decode_rows == 0 && s.prefill_tokens == 0)) return;
  Sample sample{
      {1.0, static_cast<double>(s.decode_rows), static_cast<double>(s.prefill_tokens), s.kpairs},
      ms};
  size_t w = 0;
  if (s.prefill_tokens > 0 && model_.measured()) {
    const double ratio = ms / std::max(1e-9, model_.predict_ms(s));
    if (ratios_.size() < kErrorWindow) {
      ratios_.push_back(ratio);
    } else {
      ratios_[next_ratio_] = ratio;
    }
    next_ratio_ = (next_ratio_ + 1) % kErrorWindow;
  }
  if (s.prefill_tokens > 0) {
    w = 1 + std::min<size_t>(
                kWindows - 2,
                static_cast<size_t>(std::bit_width(static_cast<uint32_t>(s.prefill_tokens))) - 1);
    seen_prefill_ = true;
  } else {
    seen_decode_ = true;
  }
  Window& win = windows_[w];
  if (win.ring.size() < kPerWindow) {
    win.ring.push_back(sample);
  } else {
    win.ring[win.next] = sample;
  }
  win.next = (win.next + 1) % kPerWindow;
  refit();
}

// Least squares over every window on terms scaled to their largest value (pairs run to
// millions, rows to a few), with a small ridge so that a term the data cannot tell apart from
// another (decode rows when every step had one) splits the cost instead of blowing up. A term
// that comes out negative is dropped and the rest refitted: a cost is never negative, and a
// negative term would make a larger chunk look cheaper.
void CostEstimator::refit() {
  Vec scale{};
  size_t n = 0;
  for (const auto& win : windows_) {
    n += win.ring.size();
    for (const auto& s : win.ring) {
      for (size_t j = 0; j < kTerms; ++j) scale[j] = std::max(scale[j], std::fabs(s.x[j]));
    }
  }
  Mat a{};
  Vec b{};
  for (const auto& win : windows_) {
    for (const auto& s : win.ring) {
      Vec z{};
      for (size_t j = 0; j < kTerms; ++j) z[j] = scale[j] > 0 ? s.x[j] / scale[j] : 0;
      for (size_t i = 0; i < kTerms; ++i) {
        b[i] += z[i] * s.ms;
        for (size_t j = 0; j < kTerms; ++j) a[i][j] += z[i] * z[j];
      }
    }
  }
  if (n == 0) return;
  const double ridge = 1e-6 * static_cast<double>(n);
  std::array<bool, kTerms> active{};
  for (size_t j = 0; j < kTerms; ++j) {
    a[j][j] += ridge;
    active[j] = scale[j] > 0;  // a term never seen stays 0
  }
  Vec coef{};
  for (size_t round = 0; round < kTerms; ++round) {
    if (!solve(a, b, active, coef)) return;  // keeps the previous model
    size_t worst = kTerms;
    for (size_t j = 0; j < kTerms; ++j) {
      if (active[j] && coef[j] < 0 && (worst == kTerms || coef[j] < coef[worst])) worst = j;
    }
    if (worst == kTerms) break;
    active[worst] = false;
  }
  for (size_t j = 0; j < kTerms; ++j) {
    coef[j] = active[j] && scale[j] > 0 ? std::max(0.0, coef[j]) / scale[j] : 0;
  }
  double overshoot = 1;
  if (!ratios_.empty()) {
    std::vector<double> r = ratios_;
    auto p90 = r.begin() + static_cast<std::ptrdiff_t>(r.size() * 9 / 10);
    std::nth_element(r.begin(), p90, r.end());
    overshoot = std::clamp(*p90, 1.0, kMaxOvershoot);
  }
  model_ = {coef[0], coef[1], coef[2], coef[3], seen_decode_ && seen_prefill_, overshoot};
}

}  // namespace baton::sched
