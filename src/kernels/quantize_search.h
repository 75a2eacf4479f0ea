#pragma once
// Scale searches shared by the quantizers (internal to the kernels module). Every helper takes
// finite inputs of any magnitude: levels are rounded and clamped without converting an
// out-of-range float to int, and scales stored as f16 saturate at the largest finite half
// instead of becoming infinite.
#include <cstdint>
#include <initializer_list>

namespace baton::kernels {

// Round to nearest, clamped to lo..hi; NaN gives lo. Never converts an out-of-range float.
int round_clamp(float v, int lo, int hi);

// v as the f16 the block stores reads it back: |v| saturates at 65504, the largest finite half.
float f16_round(float v);

// The signed value of largest magnitude among v[0..n) (the first of equal ones; 0 when all are
// 0 or NaN): symmetric quantizers map it to their most negative level.
float signed_extreme(const float* v, int n);

// x ~ scale * q - min for unsigned levels q in 0..nmax.
struct ScaleMin {
  float scale = 0;
  float min = 0;
};

// Searches scale and min for the n (<= 32) values of x with levels 0..nmax: a few level counts
// around nmax over the range of x, each refitted by least squares; keeps the best. With
// nonneg_min the min is kept >= 0 (the K-quants store it unsigned: the range includes 0).
ScaleMin search_scale_min(const float* x, int n, int nmax, bool nonneg_min = true);

// Searches a scale d for the n (<= 32) values of x, each written as d * L with L a level from
// nearest(v) (the level nearest to v). The signed extreme of x maps to about one of the two end
// levels, lo (< 0) or hi (> 0): nine candidates around each are refitted by least squares and
// the one with the smallest squared error is kept. 0 for an all-zero x.
template <class Nearest>
float search_scale(const float* x, int n, float lo, float hi, Nearest nearest);

// The scales and mins of one K-quant super-block (kQKK elements): each sub-block of sub_len
// elements gets search_scale_min for levels 0..nmax, then its scale and min are stored as
// multiples sc, mn in 0..smax of the f16 d and dmin.
struct SuperScales {
  float d = 0, dmin = 0;  // as the f16 fields read back
  uint8_t sc[16] = {}, mn[16] = {};
};
SuperScales search_super_scales(const float* x, int sub_len, int nmax, int smax);

// Level 0..nmax of x for x ~ s * q - m (0 when s is 0).
inline int level_with_min(float x, float s, float m, int nmax) {
  return s > 0 ? round_clamp((x + m) / s, 0, nmax) : 0;
}

// Implementation of search_scale (a template so the level function inlines).
double scale_error(const float* x, int n, float d, const float* levels);
template <class Nearest>
float search_scale(const float* x, int n, float lo, float hi, Nearest nearest) {
  const float max = signed_extreme(x, n);
  if (max == 0) return 0;
  float best = max / lo, levels[32];
  auto quantize = [&](float d) {
    for (int i = 0; i < n; ++i) levels[i] = nearest(x[i] / d);
  };
  quantize(best);
  double best_err = scale_error(x, n, best, levels);
  for (float extreme : {lo, hi}) {
    for (int k = -4; k <= 4; ++k) {
      quantize(max / (extreme * (1.0f + 0.03f * float(k))));
      double sxl = 0, sll = 0;
      for (int i = 0; i < n; ++i) {
        sxl += double(x[i]) * levels[i];
        sll += double(levels[i]) * levels[i];
      }
      if (sll == 0 || sxl == 0) continue;
      const float d = float(sxl / sll);
      quantize(d);
      const double err = scale_error(x, n, d, levels);
      if (err < best_err) {
        best_err = err;
        best = d;
      }
    }
  }
  return best;
}

}  // namespace baton::kernels
