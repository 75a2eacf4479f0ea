#include "kernels/quantize_extra.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/blocks.h"
#include "kernels/fp16.h"
#include "kernels/quantize_search.h"

// Each quantizer searches its scales in float (quantize_search.h), rounds them to the stored
// precision (f16, and 4- or 6-bit multiples of a super-block scale), then picks every level
// by rounding to nearest against the scale as the dequantizer will read it.

namespace baton::kernels {
namespace {

using gguf::TensorType;

// Nearest integer level in lo..hi, as a float (the level function of search_scale).
struct IntLevel {
  int lo, hi;
  float operator()(float v) const { return float(round_clamp(v, lo, hi)); }
};

// Index of the kIQ4NLValues entry nearest to v: the largest i whose midpoint with entry i - 1
// lies below v (the table is sorted). NaN gives 0.
int iq4_nearest(float v) {
  int i = 0;
  for (int step = 8; step > 0; step /= 2) {
    const int k = i + step;
    if (k < 16 && v > 0.5f * float(kIQ4NLValues[k - 1] + kIQ4NLValues[k])) i = k;
  }
  return i;
}

float iq4_level(float v) {
  return float(kIQ4NLValues[iq4_nearest(v)]);
}

// The table runs -127..113: the block's signed extreme maps to about either end.
float iq4_scale(const float* x) {
  return search_scale(x, kQK, -127.f, 113.f, iq4_level);
}

// 32 levels 0..15 as Q4_0 packs them: element i in the low nibble of byte i, i + 16 in the high.
void pack_nibbles(const uint8_t* levels, uint8_t* qs) {
  for (int i = 0; i < kQK / 2; ++i) {
    qs[i] = uint8_t((levels[i] & 0xF) | ((levels[i + kQK / 2] & 0xF) << 4));
  }
}

// The low 2 bits of 256 levels in the Q2_K / Q3_K layout (blocks.h): element 128*n + 32*j + l
// at shift 2*j of qs[32*n + l].
void pack_2bit(const uint8_t* levels, uint8_t* qs) {
  std::memset(qs, 0, kQKK / 4);
  for (int e = 0; e < kQKK; ++e) {
    qs[32 * (e / 128) + e % 32] |= uint8_t((levels[e] & 3) << (2 * ((e % 128) / 32)));
  }
}

void quantize_q4_1(const float* x, BlockQ4_1* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    // x ~ d*q + m with any sign of m: the range need not include 0.
    const ScaleMin sm = search_scale_min(x, kQK, 15, /*nonneg_min=*/false);
    const float d = f16_round(sm.scale), m = f16_round(-sm.min);
    y[i].d = fp32_to_fp16(d);
    y[i].m = fp32_to_fp16(m);
    uint8_t levels[kQK];
    for (int l = 0; l < kQK; ++l) levels[l] = uint8_t(level_with_min(x[l], d, -m, 15));
    pack_nibbles(levels, y[i].qs);
  }
}

void quantize_q5_0(const float* x, BlockQ5_0* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    const float d = f16_round(search_scale(x, kQK, -16.f, 15.f, IntLevel{-16, 15}));
    y[i].d = fp32_to_fp16(d);
    uint8_t levels[kQK];
    uint32_t qh = 0;
    for (int l = 0; l < kQK; ++l) {
      const int q = (d != 0 ? round_clamp(x[l] / d, -16, 15) : 0) + 16;
      levels[l] = uint8_t(q & 0xF);
      qh |= uint32_t(q >> 4) << l;
    }
    std::memcpy(y[i].qh, &qh, 4);  // little-endian, as the dequantizer reads it
    pack_nibbles(levels, y[i].qs);
  }
}

void quantize_iq4_nl(const float* x, BlockIQ4_NL* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    const float d = f16_round(iq4_scale(x));
    y[i].d = fp32_to_fp16(d);
    uint8_t idx[kQK];
    for (int l = 0; l < kQK; ++l) idx[l] = uint8_t(iq4_nearest(d != 0 ? x[l] / d : 0.f));
    pack_nibbles(idx, y[i].qs);
  }
}

void quantize_q2_k(const float* x, BlockQ2_K* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQKK) {
    // 16 sub-blocks of 16, levels 0..3, 4-bit scales and mins.
    const SuperScales ss = search_super_scales(x, 16, 3, 15);
    y[i].d = fp32_to_fp16(ss.d);
    y[i].dmin = fp32_to_fp16(ss.dmin);
    uint8_t levels[kQKK];
    for (int j = 0; j < 16; ++j) {
      y[i].scales[j] = uint8_t(ss.sc[j] | (ss.mn[j] << 4));
      const float s = ss.d * float(ss.sc[j]), m = ss.dmin * float(ss.mn[j]);
      for (int l = 0; l < 16; ++l) {
        levels[16 * j + l] = uint8_t(level_with_min(x[16 * j + l], s, m, 3));
      }
    }
    pack_2bit(levels, y[i].qs);
  }
}

// Scale i (0..15) of a Q3_K block, biased value u in 0..63: the inverse of q3k_scale.
void pack_q3k_scale(int i, int u, uint8_t* s) {
  s[i % 8] |= uint8_t((u & 0xF) << (4 * (i / 8)));
  s[8 + i % 4] |= uint8_t((u >> 4) << (2 * (i / 4)));
}

void quantize_q3_k(const float* x, BlockQ3_K* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQKK) {
    // 16 sub-blocks of 16, levels -4..3, signed 6-bit scales whose extreme maps to -32.
    float scales[16];
    for (int j = 0; j < 16; ++j)
      scales[j] = search_scale(x + 16 * j, 16, -4.f, 3.f, IntLevel{-4, 3});
    const float d = f16_round(signed_extreme(scales, 16) / -32.f);
    y[i].d = fp32_to_fp16(d);
    std::memset(y[i].scales, 0, sizeof(y[i].scales));
    std::memset(y[i].hmask, 0, sizeof(y[i].hmask));
    uint8_t levels[kQKK];  // level + 4, 0..7
    for (int j = 0; j < 16; ++j) {
      const int sc = d != 0 ? round_clamp(scales[j] / d, -32, 31) : 0;
      pack_q3k_scale(j, sc + 32, y[i].scales);
      const float s = d * float(sc);
      for (int l = 0; l < 16; ++l) {
        levels[16 * j + l] = uint8_t((s != 0 ? round_clamp(x[16 * j + l] / s, -4, 3) : 0) + 4);
      }
    }
    pack_2bit(levels, y[i].qs);
    for (int e = 0; e < kQKK; ++e) {  // high bit set: the level is not shifted down by 4
      if (levels[e] >= 4) y[i].hmask[e % 32] |= uint8_t(1 << (e / 32));
    }
  }
}

void quantize_q5_k(const float* x, BlockQ5_K* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQKK) {
    // As Q4_K with levels 0..31: the fifth bit of element l of block j is bit j of qh[l].
    const SuperScales ss = search_super_scales(x, kQK, 31, 63);
    y[i].d = fp32_to_fp16(ss.d);
    y[i].dmin = fp32_to_fp16(ss.dmin);
    q4k_pack_scales(ss.sc, ss.mn, y[i].scales);
    std::memset(y[i].qh, 0, sizeof(y[i].qh));
    std::memset(y[i].qs, 0, sizeof(y[i].qs));
    for (int j = 0; j < 8; ++j) {
      const float s = ss.d * float(ss.sc[j]), m = ss.dmin * float(ss.mn[j]);
      for (int l = 0; l < kQK; ++l) {
        const int q = level_with_min(x[kQK * j + l], s, m, 31);
        y[i].qs[32 * (j / 2) + l] |= uint8_t((q & 0xF) << (4 * (j % 2)));
        y[i].qh[l] |= uint8_t((q >> 4) << j);
      }
    }
  }
}

void quantize_iq4_xs(const float* x, BlockIQ4_XS* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQKK) {
    // Per 32 elements an IQ4_NL scale, stored as a signed 6-bit multiple (biased by 32) of the
    // f16 d; the signed extreme of the eight maps to -32.
    float scales[8];
    for (int j = 0; j < 8; ++j) scales[j] = iq4_scale(x + kQK * j);
    const float d = f16_round(signed_extreme(scales, 8) / -32.f);
    y[i].d = fp32_to_fp16(d);
    y[i].scales_h = 0;
    std::memset(y[i].scales_l, 0, sizeof(y[i].scales_l));
    for (int j = 0; j < 8; ++j) {
      const int ls = (d != 0 ? round_clamp(scales[j] / d, -32, 31) : 0) + 32;
      y[i].scales_l[j / 2] |= uint8_t((ls & 0xF) << (4 * (j % 2)));
      y[i].scales_h = uint16_t(y[i].scales_h | ((ls >> 4) << (2 * j)));
      const float dl = d * float(ls - 32);
      uint8_t idx[kQK];
      for (int l = 0; l < kQK; ++l) {
        idx[l] = uint8_t(iq4_nearest(dl != 0 ? x[kQK * j + l] / dl : 0.f));
      }
      pack_nibbles(idx, y[i].qs + 16 * j);
    }
  }
}

// Code 0..15 of the MXFP4 value nearest to a (in units of the block scale): the magnitudes
// 0 1 2 3 4 6 8 12 split at their midpoints (a tie takes the smaller), negative values take the
// codes 8 + k. NaN gives code 0; nothing is converted to an integer.
int mxfp4_code(float a) {
  static constexpr float kMidpoints[7] = {0.5f, 1.5f, 2.5f, 3.5f, 5.f, 7.f, 10.f};
  const float m = std::fabs(a);
  int k = 0;
  while (k < 7 && m > kMidpoints[k]) ++k;
  return k == 0 ? 0 : a < 0 ? 8 + k : k;
}

// Codes of block x under exponent byte e; returns their squared error.
double mxfp4_fit(const float* x, int e, uint8_t* codes) {
  const float d = e8m0_half(uint8_t(e));
  double err = 0;
  for (int l = 0; l < kQK; ++l) {
    codes[l] = uint8_t(mxfp4_code(x[l] / d));
    const double diff = double(x[l]) - double(kMXFP4Values[codes[l]]) * double(d);
    err += diff * diff;
  }
  return err;
}

// The exponent is a power of two, so the only choice is which one: the block's extreme x = f*2^p
// (f in [0.5, 1)) under byte p + 124 (the largest value 12 * 2^(p-4) covers f <= 0.75, what
// ggml's reference picks) or its neighbours (p + 125 covers every f at half the resolution;
// p + 123 clips the extreme for finer steps below it). The byte of least squared error wins, the
// first one on a tie; bytes stay in 0..254 (255 is NaN to the OCP format).
void quantize_mxfp4(const float* x, BlockMXFP4* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float amax = 0;
    for (int l = 0; l < kQK; ++l) amax = std::max(amax, std::fabs(x[l]));
    int natural = 254;  // an infinite extreme takes the largest scale
    if (amax == 0) {
      natural = 0;
    } else if (amax <= std::numeric_limits<float>::max()) {
      int p = 0;
      std::frexp(amax, &p);
      natural = std::clamp(p + 124, 0, 254);
    }
    uint8_t codes[kQK];
    int best = natural;
    double best_err = mxfp4_fit(x, natural, codes);
    for (int e : {natural + 1, natural - 1}) {
      if (e < 0 || e > 254) continue;
      const double err = mxfp4_fit(x, e, codes);
      if (err < best_err) {
        best_err = err;
        best = e;
      }
    }
    mxfp4_fit(x, best, codes);
    y[i].e = uint8_t(best);
    pack_nibbles(codes, y[i].qs);
  }
}

}  // namespace

void quantize_extra(TensorType t, const float* x, void* dst, int64_t n) {
  switch (t) {
    case TensorType::Q4_1:
      return quantize_q4_1(x, static_cast<BlockQ4_1*>(dst), n / kQK);
    case TensorType::Q5_0:
      return quantize_q5_0(x, static_cast<BlockQ5_0*>(dst), n / kQK);
    case TensorType::IQ4_NL:
      return quantize_iq4_nl(x, static_cast<BlockIQ4_NL*>(dst), n / kQK);
    case TensorType::Q2_K:
      return quantize_q2_k(x, static_cast<BlockQ2_K*>(dst), n / kQKK);
    case TensorType::Q3_K:
      return quantize_q3_k(x, static_cast<BlockQ3_K*>(dst), n / kQKK);
    case TensorType::Q5_K:
      return quantize_q5_k(x, static_cast<BlockQ5_K*>(dst), n / kQKK);
    case TensorType::IQ4_XS:
      return quantize_iq4_xs(x, static_cast<BlockIQ4_XS*>(dst), n / kQKK);
    case TensorType::MXFP4:
      return quantize_mxfp4(x, static_cast<BlockMXFP4*>(dst), n / kQK);
    default:
      throw std::invalid_argument("kernels: no quantizer for type id " +
                                  std::to_string(uint32_t(t)));
  }
}

}  // namespace baton::kernels
