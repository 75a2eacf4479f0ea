// Quantizers of the 32-element block types (quant_block32.h). Each rounds every level to nearest
// against the scale as the dequantizer will read it; Q4_1, Q5_0 and IQ4_NL search their scale
// first (quantize_search.h), Q8_0 and Q4_0 take the block's extreme over the widest level, and
// MXFP4 the power of two of least squared error.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "kernels/fp16.h"
#include "kernels/quant_block32.h"
#include "kernels/quant_levels.h"

namespace baton::kernels {
namespace {

using gguf::TensorType;

void quantize_q8_0(const float* x, BlockQ8_0* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    float amax = 0;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.f;
    const float id = d != 0 ? 1.f / d : 0.f;
    // The stored scale saturates at the largest half; levels still come from the exact one,
    // clamped, so no out-of-range or NaN float is ever converted to an integer.
    y[i].d = fp32_to_fp16(f16_round(d));
    for (int j = 0; j < kQK; ++j) y[i].qs[j] = int8_t(round_clamp(x[j] * id, -127, 127));
  }
}

// Level 0..15 of v = x / d, truncating v + 8.5 as the format's reference quantizer does; NaN
// gives level 0 and nothing out of range reaches the conversion.
int q4_0_level(float v) {
  const float shifted = v + 8.5f;
  return shifted >= 0 ? int(std::min(shifted, 15.0f)) : 0;
}

void quantize_q4_0(const float* x, BlockQ4_0* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, x += kQK) {
    // The signed extreme maps to -8 so the full 16 levels are used.
    const float d = signed_extreme(x, kQK) / -8.f;
    const float id = d != 0 ? 1.f / d : 0.f;
    y[i].d = fp32_to_fp16(f16_round(d));
    for (int j = 0; j < kQK / 2; ++j) {
      const int lo = q4_0_level(x[j] * id);
      const int hi = q4_0_level(x[j + kQK / 2] * id);
      y[i].qs[j] = uint8_t(lo | (hi << 4));
    }
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

bool is_block32_type(TensorType t) {
  switch (t) {
    case TensorType::Q8_0:
    case TensorType::Q4_0:
    case TensorType::Q4_1:
    case TensorType::Q5_0:
    case TensorType::IQ4_NL:
    case TensorType::MXFP4:
      return true;
    default:
      return false;
  }
}

void quantize_block32(TensorType t, const float* x, void* dst, int64_t n) {
  const int64_t nb = n / kQK;
  switch (t) {
    case TensorType::Q8_0:
      return quantize_q8_0(x, static_cast<BlockQ8_0*>(dst), nb);
    case TensorType::Q4_0:
      return quantize_q4_0(x, static_cast<BlockQ4_0*>(dst), nb);
    case TensorType::Q4_1:
      return quantize_q4_1(x, static_cast<BlockQ4_1*>(dst), nb);
    case TensorType::Q5_0:
      return quantize_q5_0(x, static_cast<BlockQ5_0*>(dst), nb);
    case TensorType::IQ4_NL:
      return quantize_iq4_nl(x, static_cast<BlockIQ4_NL*>(dst), nb);
    case TensorType::MXFP4:
      return quantize_mxfp4(x, static_cast<BlockMXFP4*>(dst), nb);
    default:
      throw std::invalid_argument("kernels: no 32-element block quantizer for type id " +
                                  std::to_string(uint32_t(t)));
  }
}

}  // namespace baton::kernels
