#include "kernels/quantize_k.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/fp16.h"

namespace baton::kernels {
namespace {

struct ScaleMin {
  float scale = 0;  // x ~ scale * q - min, q in 0..15
  float min = 0;    // >= 0
};

// Least-squares refit of x ~ s*q - m for fixed levels q; m is kept >= 0 (mins are unsigned).
ScaleMin refit(const float* x, const int* q, int n) {
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
  if (b > 0) {                   // min must be <= 0 in x terms: refit with b = 0
    b = 0;
    s = sqq > 0 ? sqx / sqq : 0;
  }
  return {float(std::max(0.0, s)), float(-b)};
}

double sub_block_error(const float* x, int n, ScaleMin sm, int* q) {
  double err = 0;
  for (int i = 0; i < n; ++i) {
    const int l = sm.scale > 0 ? int(std::lround((x[i] + sm.min) / sm.scale)) : 0;
    q[i] = std::clamp(l, 0, 15);
    const double e = sm.scale * q[i] - sm.min - x[i];
    err += e * e;
  }
  return err;
}

// Searches a few level counts around 15 over [min(x,0), max(x)] and refits each; keeps the
// pair with the smallest squared error.
ScaleMin search_scale_min(const float* x, int n) {
  float lo = 0, hi = x[0];
  for (int i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  if (hi <= lo) return {0, -lo};
  int q[kQK];
  ScaleMin best{(hi - lo) / 15.f, -lo};
  double best_err = sub_block_error(x, n, best, q);
  for (float steps = 13.f; steps <= 17.f; steps += 0.5f) {
    ScaleMin cand{(hi - lo) / steps, -lo};
    sub_block_error(x, n, cand, q);
    cand = refit(x, q, n);
    const double err = sub_block_error(x, n, cand, q);
    if (err < best_err) {
      best_err = err;
      best = cand;
    }
  }
  return best;
}

void pack_q4k_scales(const uint8_t* sc, const uint8_t* m, uint8_t* out) {
  for (int j = 0; j < 4; ++j) {
    out[j] = uint8_t(sc[j] | ((sc[j + 4] >> 4) << 6));
    out[j + 4] = uint8_t(m[j] | ((m[j + 4] >> 4) << 6));
    out[j + 8] = uint8_t((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
  }
}

}  // namespace

void quantize_q4_k(const float* x, BlockQ4_K* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQKK) {
    ScaleMin sm[8];
    float max_scale = 0, max_min = 0;
    for (int j = 0; j < 8; ++j) {
      sm[j] = search_scale_min(x + j * kQK, kQK);
      max_scale = std::max(max_scale, sm[j].scale);
      max_min = std::max(max_min, sm[j].min);
    }
    const float d = fp16_to_fp32(fp32_to_fp16(max_scale / 63.f));
    const float dmin = fp16_to_fp32(fp32_to_fp16(max_min / 63.f));
    uint8_t sc[8], mn[8];
    for (int j = 0; j < 8; ++j) {
      sc[j] = uint8_t(d > 0 ? std::clamp(int(std::lround(sm[j].scale / d)), 0, 63) : 0);
      mn[j] = uint8_t(dmin > 0 ? std::clamp(int(std::lround(sm[j].min / dmin)), 0, 63) : 0);
    }
    y[i].d = fp32_to_fp16(d);
    y[i].dmin = fp32_to_fp16(dmin);
    pack_q4k_scales(sc, mn, y[i].scales);
    uint8_t levels[kQKK];
    for (int j = 0; j < 8; ++j) {
      const float s = d * sc[j], m = dmin * mn[j];
      for (int l = 0; l < kQK; ++l) {
        const int q = s > 0 ? int(std::lround((x[j * kQK + l] + m) / s)) : 0;
        levels[j * kQK + l] = uint8_t(std::clamp(q, 0, 15));
      }
    }
    for (int j = 0; j < 4; ++j) {
      for (int l = 0; l < 32; ++l) {
        y[i].qs[32 * j + l] = uint8_t(levels[64 * j + l] | (levels[64 * j + 32 + l] << 4));
      }
    }
  }
}

void dequantize_q4_k(const BlockQ4_K* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(x[i].d);
    const float min = fp16_to_fp32(x[i].dmin);
    const uint8_t* q = x[i].qs;
    for (int j = 0; j < 4; ++j, q += 32) {
      uint8_t sc, m;
      q4k_scale_min(2 * j, x[i].scales, &sc, &m);
      const float d1 = d * sc, m1 = min * m;
      q4k_scale_min(2 * j + 1, x[i].scales, &sc, &m);
      const float d2 = d * sc, m2 = min * m;
      for (int l = 0; l < 32; ++l) *y++ = d1 * (q[l] & 0xF) - m1;
      for (int l = 0; l < 32; ++l) *y++ = d2 * (q[l] >> 4) - m2;
    }
  }
}

void quantize_q6_k(const float* x, BlockQ6_K* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQKK) {
    // Per 16-element sub-block: the signed extreme maps to level -32.
    float scales[16];
    float max_abs_scale = 0, max_scale = 0;
    for (int j = 0; j < 16; ++j) {
      float amax = 0, max = 0;
      for (int l = 0; l < 16; ++l) {
        if (std::fabs(x[16 * j + l]) > amax) {
          amax = std::fabs(x[16 * j + l]);
          max = x[16 * j + l];
        }
      }
      scales[j] = max / -32.f;
      if (std::fabs(scales[j]) > max_abs_scale) {
        max_abs_scale = std::fabs(scales[j]);
        max_scale = scales[j];
      }
    }
    const float d = fp16_to_fp32(fp32_to_fp16(max_scale / -128.f));
    y[i].d = fp32_to_fp16(d);
    uint8_t levels[kQKK];
    for (int j = 0; j < 16; ++j) {
      const int sc = d != 0 ? std::clamp(int(std::lround(scales[j] / d)), -128, 127) : 0;
      y[i].scales[j] = int8_t(sc);
      const float s = d * sc;
      for (int l = 0; l < 16; ++l) {
        const int q = s != 0 ? int(std::lround(x[16 * j + l] / s)) : 0;
        levels[16 * j + l] = uint8_t(std::clamp(q, -32, 31) + 32);
      }
    }
    for (int n = 0; n < 2; ++n) {
      const uint8_t* L = levels + 128 * n;
      for (int l = 0; l < 32; ++l) {
        const uint8_t q1 = L[l], q2 = L[l + 32], q3 = L[l + 64], q4 = L[l + 96];
        y[i].ql[64 * n + l] = uint8_t((q1 & 0xF) | ((q3 & 0xF) << 4));
        y[i].ql[64 * n + l + 32] = uint8_t((q2 & 0xF) | ((q4 & 0xF) << 4));
        y[i].qh[32 * n + l] =
            uint8_t((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
      }
    }
  }
}

void dequantize_q6_k(const BlockQ6_K* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i) {
    const float d = fp16_to_fp32(x[i].d);
    const uint8_t* ql = x[i].ql;
    const uint8_t* qh = x[i].qh;
    const int8_t* sc = x[i].scales;
    for (int n = 0; n < kQKK; n += 128, y += 128, ql += 64, qh += 32, sc += 8) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = int((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = int((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = int((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = int((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l] = d * sc[is + 0] * q1;
        y[l + 32] = d * sc[is + 2] * q2;
        y[l + 64] = d * sc[is + 4] * q3;
        y[l + 96] = d * sc[is + 6] * q4;
      }
    }
  }
}

}  // namespace baton::kernels
