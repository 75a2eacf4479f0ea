#include "kernels/quantize_search.h"

#include <algorithm>
#include <cmath>

#include "kernels/blocks.h"
#include "kernels/fp16.h"

namespace baton::kernels {
namespace {

// Least-squares refit of x ~ s*q - m for fixed levels q; with nonneg_min, m is kept >= 0.
ScaleMin refit(const float* x, const int* q, int n, bool nonneg_min) {
  double sq = 0, sqq = 0, sx = 0, sqx = 0;
  for (int i = 0; i < n; ++i) {
    sq += q[i];
    sqq += double(q[i]) * q[i];
    sx += x[i];
    sqx += double(q[i]) * x[i];
  }
  const double det = n * sqq - sq * sq;
  if (det <= 0) return {0, 0};
  double s = (n * sqx - sq * sx) / det;
  double b = (sx - s * sq) / n;  // x ~ s*q + b
  if (b > 0 && nonneg_min) {     // min must be <= 0 in x terms: refit with b = 0
    b = 0;
    s = sqq > 0 ? sqx / sqq : 0;
  }
  return {float(std::max(0.0, s)), float(-b)};
}

double sub_block_error(const float* x, int n, int nmax, ScaleMin sm, int* q) {
  double err = 0;
  for (int i = 0; i < n; ++i) {
    q[i] = level_with_min(x[i], sm.scale, sm.min, nmax);
    const double e = double(sm.scale) * q[i] - sm.min - x[i];
    err += e * e;
  }
  return err;
}

}  // namespace

int round_clamp(float v, int lo, int hi) {
  if (!(v > float(lo))) return lo;  // also NaN
  if (v >= float(hi)) return hi;
  return int(std::lround(v));
}

float f16_round(float v) {
  return fp16_to_fp32(fp32_to_fp16(std::clamp(v, -65504.0f, 65504.0f)));
}

float signed_extreme(const float* v, int n) {
  float ext = 0, amax = 0;
  for (int i = 0; i < n; ++i) {
    const float a = std::fabs(v[i]);
    if (a > amax) {
      amax = a;
      ext = v[i];
    }
  }
  return ext;
}

double scale_error(const float* x, int n, float d, const float* levels) {
  double err = 0;
  for (int i = 0; i < n; ++i) {
    const double e = double(d) * levels[i] - x[i];
    err += e * e;
  }
  return err;
}

// Level counts nmax - 2 .. nmax + 2 (for nmax 15; scaled with nmax otherwise) in nine steps.
ScaleMin search_scale_min(const float* x, int n, int nmax, bool nonneg_min) {
  float lo = nonneg_min ? 0 : x[0], hi = x[0];
  for (int i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  if (hi <= lo) return {0, -lo};
  int q[kQK];
  ScaleMin best{(hi - lo) / float(nmax), -lo};
  double best_err = sub_block_error(x, n, nmax, best, q);
  const float step = float(nmax) / 30.f;
  for (int k = -4; k <= 4; ++k) {
    ScaleMin cand{(hi - lo) / (float(nmax) + step * float(k)), -lo};
    sub_block_error(x, n, nmax, cand, q);
    cand = refit(x, q, n, nonneg_min);
    const double err = sub_block_error(x, n, nmax, cand, q);
    if (err < best_err) {
      best_err = err;
      best = cand;
    }
  }
  return best;
}

SuperScales search_super_scales(const float* x, int sub_len, int nmax, int smax) {
  const int n_sub = kQKK / sub_len;
  ScaleMin sm[16];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < n_sub; ++j) {
    sm[j] = search_scale_min(x + j * sub_len, sub_len, nmax);
    max_scale = std::max(max_scale, sm[j].scale);
    max_min = std::max(max_min, sm[j].min);
  }
  SuperScales out;
  out.d = f16_round(max_scale / float(smax));
  out.dmin = f16_round(max_min / float(smax));
  for (int j = 0; j < n_sub; ++j) {
    out.sc[j] = uint8_t(out.d > 0 ? round_clamp(sm[j].scale / out.d, 0, smax) : 0);
    out.mn[j] = uint8_t(out.dmin > 0 ? round_clamp(sm[j].min / out.dmin, 0, smax) : 0);
  }
  return out;
}

}  // namespace baton::kernels
