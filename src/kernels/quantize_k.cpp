#include "kernels/quantize_k.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/fp16.h"
#include "kernels/quantize_search.h"

namespace baton::kernels {

void quantize_q4_k(const float* x, BlockQ4_K* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQKK) {
    const SuperScales ss = search_super_scales(x, kQK, 15, 63);
    y[i].d = fp32_to_fp16(ss.d);
    y[i].dmin = fp32_to_fp16(ss.dmin);
    q4k_pack_scales(ss.sc, ss.mn, y[i].scales);
    uint8_t levels[kQKK];
    for (int j = 0; j < 8; ++j) {
      const float s = ss.d * ss.sc[j], m = ss.dmin * ss.mn[j];
      for (int l = 0; l < kQK; ++l) {
        levels[j * kQK + l] = uint8_t(level_with_min(x[j * kQK + l], s, m, 15));
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
    for (int j = 0; j < 16; ++j) scales[j] = signed_extreme(x + 16 * j, 16) / -32.f;
    const float d = f16_round(signed_extreme(scales, 16) / -128.f);
    y[i].d = fp32_to_fp16(d);
    uint8_t levels[kQKK];
    for (int j = 0; j < 16; ++j) {
      const int sc = d != 0 ? round_clamp(scales[j] / d, -128, 127) : 0;
      y[i].scales[j] = int8_t(sc);
      const float s = d * sc;
      for (int l = 0; l < 16; ++l) {
        const int q = s != 0 ? round_clamp(x[16 * j + l] / s, -32, 31) : 0;
        levels[16 * j + l] = uint8_t(q + 32);
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
