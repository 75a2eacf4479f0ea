// Quantizers of the super-block types (quant_superblock.h). Each searches its sub-block scales
// in float (quantize_search.h; Q6_K takes each sub-block's extreme), rounds them to the stored
// precision (f16, and 4-, 6- or 8-bit multiples of the super-block scale), then picks every level
// by rounding to nearest against the scale as the dequantizer will read it.
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/fp16.h"
#include "kernels/quant_levels.h"
#include "kernels/quant_superblock.h"

namespace baton::kernels {
namespace {

using gguf::TensorType;

// The low 2 bits of 256 levels in the Q2_K / Q3_K layout (blocks.h): element 128*n + 32*j + l
// at shift 2*j of qs[32*n + l].
void pack_2bit(const uint8_t* levels, uint8_t* qs) {
  std::memset(qs, 0, kQKK / 4);
  for (int e = 0; e < kQKK; ++e) {
    qs[32 * (e / 128) + e % 32] |= uint8_t((levels[e] & 3) << (2 * ((e % 128) / 32)));
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

}  // namespace

bool is_superblock_type(TensorType t) {
  switch (t) {
    case TensorType::Q2_K:
    case TensorType::Q3_K:
    case TensorType::Q4_K:
    case TensorType::Q5_K:
    case TensorType::Q6_K:
    case TensorType::IQ4_XS:
      return true;
    default:
      return false;
  }
}

void quantize_superblock(TensorType t, const float* x, void* dst, int64_t n) {
  const int64_t nb = n / kQKK;
  switch (t) {
    case TensorType::Q2_K:
      return quantize_q2_k(x, static_cast<BlockQ2_K*>(dst), nb);
    case TensorType::Q3_K:
      return quantize_q3_k(x, static_cast<BlockQ3_K*>(dst), nb);
    case TensorType::Q4_K:
      return quantize_q4_k(x, static_cast<BlockQ4_K*>(dst), nb);
    case TensorType::Q5_K:
      return quantize_q5_k(x, static_cast<BlockQ5_K*>(dst), nb);
    case TensorType::Q6_K:
      return quantize_q6_k(x, static_cast<BlockQ6_K*>(dst), nb);
    case TensorType::IQ4_XS:
      return quantize_iq4_xs(x, static_cast<BlockIQ4_XS*>(dst), nb);
    default:
      throw std::invalid_argument("kernels: no super-block quantizer for type id " +
                                  std::to_string(uint32_t(t)));
  }
}

}  // namespace baton::kernels
