#include "kernels/quant_extra.h"

#include <algorithm>
#include <cstring>

#include "kernels/blocks.h"
#include "kernels/fp16.h"
#include "kernels/matmul_impl.h"

namespace baton::kernels {
namespace {

using gguf::TensorType;

uint32_t q5_0_high_bits(const BlockQ5_0& b) {
  uint32_t qh;
  std::memcpy(&qh, b.qh, 4);
  return qh;
}

// Level 0..31 of element i (0..31) of a Q5_0 block.
int q5_0_level(const BlockQ5_0& b, uint32_t qh, int i) {
  const int nib = i < 16 ? b.qs[i] & 0xF : b.qs[i - 16] >> 4;
  return nib | int((qh >> i) & 1) << 4;
}

// 2-bit field of element l (0..31) of 32-element block j (0..7) of a Q2_K / Q3_K block.
int k2_level(const uint8_t* qs, int j, int l) {
  return (qs[32 * (j / 4) + l] >> (2 * (j % 4))) & 3;
}

// Level -4..3 of element l of block j of a Q3_K block.
int q3k_level(const BlockQ3_K& b, int j, int l) {
  return k2_level(b.qs, j, l) - ((b.hmask[l] >> j) & 1 ? 0 : 4);
}

// Level 0..31 of element l of block j of a Q5_K block.
int q5k_level(const BlockQ5_K& b, int j, int l) {
  const int nib = (b.qs[32 * (j / 2) + l] >> (4 * (j % 2))) & 0xF;
  return nib | ((b.qh[l] >> j) & 1) << 4;
}

int iq4_index(const uint8_t* qs, int i) {
  return i < 16 ? qs[i] & 0xF : qs[i - 16] >> 4;
}

// Dequantization: the expressions (and so the roundings) of ggml's reference code.
template <class Block, class Fn>
void for_blocks(const void* src, int64_t n, int64_t block_elems, Fn fn) {
  const auto* blk = static_cast<const Block*>(src);
  for (int64_t i = 0; i < n / block_elems; ++i) fn(blk[i]);
}

void dequantize_small(TensorType t, const void* src, float* y, int64_t n) {
  switch (t) {
    case TensorType::Q4_1:
      return for_blocks<BlockQ4_1>(src, n, kQK, [&](const BlockQ4_1& b) {
        const float d = fp16_to_fp32(b.d), m = fp16_to_fp32(b.m);
        for (int i = 0; i < kQK; ++i) *y++ = float(iq4_index(b.qs, i)) * d + m;
      });
    case TensorType::Q5_0:
      return for_blocks<BlockQ5_0>(src, n, kQK, [&](const BlockQ5_0& b) {
        const float d = fp16_to_fp32(b.d);
        const uint32_t qh = q5_0_high_bits(b);
        for (int i = 0; i < kQK; ++i) *y++ = float(q5_0_level(b, qh, i) - 16) * d;
      });
    case TensorType::MXFP4:
      return for_blocks<BlockMXFP4>(src, n, kQK, [&](const BlockMXFP4& b) {
        const float d = e8m0_half(b.e);
        for (int i = 0; i < kQK; ++i) *y++ = float(kMXFP4Values[iq4_index(b.qs, i)]) * d;
      });
    default:  // IQ4_NL
      return for_blocks<BlockIQ4_NL>(src, n, kQK, [&](const BlockIQ4_NL& b) {
        const float d = fp16_to_fp32(b.d);
        for (int i = 0; i < kQK; ++i) *y++ = d * float(kIQ4NLValues[iq4_index(b.qs, i)]);
      });
  }
}

void dequantize_super(TensorType t, const void* src, float* y, int64_t n) {
  switch (t) {
    case TensorType::Q2_K:
      return for_blocks<BlockQ2_K>(src, n, kQKK, [&](const BlockQ2_K& b) {
        const float d = fp16_to_fp32(b.d), dmin = fp16_to_fp32(b.dmin);
        for (int e = 0; e < kQKK; ++e) {
          const int j = e / 32, l = e % 32, sc = b.scales[2 * j + l / 16];
          const float dl = d * float(sc & 0xF), ml = dmin * float(sc >> 4);
          *y++ = dl * float(k2_level(b.qs, j, l)) - ml;
        }
      });
    case TensorType::Q3_K:
      return for_blocks<BlockQ3_K>(src, n, kQKK, [&](const BlockQ3_K& b) {
        const float d = fp16_to_fp32(b.d);
        for (int e = 0; e < kQKK; ++e) {
          const int j = e / 32, l = e % 32;
          const float dl = d * float(q3k_scale(2 * j + l / 16, b.scales) - 32);
          *y++ = dl * float(q3k_level(b, j, l));
        }
      });
    case TensorType::Q5_K:
      return for_blocks<BlockQ5_K>(src, n, kQKK, [&](const BlockQ5_K& b) {
        const float d = fp16_to_fp32(b.d), dmin = fp16_to_fp32(b.dmin);
        for (int j = 0; j < 8; ++j) {
          uint8_t sc, m;
          q4k_scale_min(j, b.scales, &sc, &m);
          const float d1 = d * float(sc), m1 = dmin * float(m);
          for (int l = 0; l < kQK; ++l) *y++ = d1 * float(q5k_level(b, j, l)) - m1;
        }
      });
    default:  // IQ4_XS
      return for_blocks<BlockIQ4_XS>(src, n, kQKK, [&](const BlockIQ4_XS& b) {
        const float d = fp16_to_fp32(b.d);
        for (int j = 0; j < 8; ++j) {
          const float dl = d * float(iq4xs_scale(j, b) - 32);
          for (int i = 0; i < kQK; ++i)
            *y++ = dl * float(kIQ4NLValues[iq4_index(b.qs + 16 * j, i)]);
        }
      });
  }
}

// Unpacking. Levels are kept unsigned where the type has a min (Q4_1, Q5_K, Q2_K), so the
// offset is exactly the min and needs no rounding of its own.
void unpack_small(TensorType t, const uint8_t* row, int64_t nb, bool values, UnpackedRow& out) {
  for (int64_t b = 0; b < nb; ++b) {
    int8_t* q = values ? &out.q[size_t(b * kQK)] : nullptr;
    float s = 0;
    if (t == TensorType::Q4_1) {
      const auto& blk = reinterpret_cast<const BlockQ4_1*>(row)[b];
      s = fp16_to_fp32(blk.d);
      out.off[size_t(b)] = fp16_to_fp32(blk.m);
      for (int i = 0; values && i < kQK; ++i) q[i] = int8_t(iq4_index(blk.qs, i));
    } else if (t == TensorType::Q5_0) {
      const auto& blk = reinterpret_cast<const BlockQ5_0*>(row)[b];
      s = fp16_to_fp32(blk.d);
      const uint32_t qh = q5_0_high_bits(blk);
      for (int i = 0; values && i < kQK; ++i) q[i] = int8_t(q5_0_level(blk, qh, i) - 16);
    } else if (t == TensorType::MXFP4) {
      const auto& blk = reinterpret_cast<const BlockMXFP4*>(row)[b];
      s = e8m0_half(blk.e);
      for (int i = 0; values && i < kQK; ++i) q[i] = kMXFP4Values[iq4_index(blk.qs, i)];
    } else {  // IQ4_NL
      const auto& blk = reinterpret_cast<const BlockIQ4_NL*>(row)[b];
      s = fp16_to_fp32(blk.d);
      for (int i = 0; values && i < kQK; ++i) q[i] = kIQ4NLValues[iq4_index(blk.qs, i)];
    }
    std::fill_n(&out.scale8[size_t(b * 8)], 8, s);
  }
}

void fill_halves(UnpackedRow& out, int64_t b, float s_lo, float s_hi) {
  std::fill_n(&out.scale8[size_t(b * 8)], 4, s_lo);
  std::fill_n(&out.scale8[size_t(b * 8 + 4)], 4, s_hi);
}

void unpack_q2_k(const BlockQ2_K& blk, int64_t b0, bool values, UnpackedRow& out) {
  const float d = fp16_to_fp32(blk.d), dmin = fp16_to_fp32(blk.dmin);
  for (int j = 0; j < 8; ++j) {
    const int64_t b = b0 + j;
    const int lo = blk.scales[2 * j], hi = blk.scales[2 * j + 1];
    fill_halves(out, b, d * float(lo & 0xF), d * float(hi & 0xF));
    out.off2[size_t(2 * b)] = -(dmin * float(lo >> 4));
    out.off2[size_t(2 * b + 1)] = -(dmin * float(hi >> 4));
    for (int l = 0; values && l < kQK; ++l) {
      out.q[size_t(b * kQK + l)] = int8_t(k2_level(blk.qs, j, l));
    }
  }
}

void unpack_q3_k(const BlockQ3_K& blk, int64_t b0, bool values, UnpackedRow& out) {
  const float d = fp16_to_fp32(blk.d);
  for (int j = 0; j < 8; ++j) {
    const int64_t b = b0 + j;
    fill_halves(out, b, d * float(q3k_scale(2 * j, blk.scales) - 32),
                d * float(q3k_scale(2 * j + 1, blk.scales) - 32));
    for (int l = 0; values && l < kQK; ++l) {
      out.q[size_t(b * kQK + l)] = int8_t(q3k_level(blk, j, l));
    }
  }
}

void unpack_q5_k(const BlockQ5_K& blk, int64_t b0, bool values, UnpackedRow& out) {
  const float d = fp16_to_fp32(blk.d), dmin = fp16_to_fp32(blk.dmin);
  for (int j = 0; j < 8; ++j) {
    const int64_t b = b0 + j;
    uint8_t sc, m;
    q4k_scale_min(j, blk.scales, &sc, &m);
    const float s = d * float(sc);
    fill_halves(out, b, s, s);
    out.off[size_t(b)] = -(dmin * float(m));
    for (int l = 0; values && l < kQK; ++l) {
      out.q[size_t(b * kQK + l)] = int8_t(q5k_level(blk, j, l));
    }
  }
}

void unpack_iq4_xs(const BlockIQ4_XS& blk, int64_t b0, bool values, UnpackedRow& out) {
  const float d = fp16_to_fp32(blk.d);
  for (int j = 0; j < 8; ++j) {
    const int64_t b = b0 + j;
    const float s = d * float(iq4xs_scale(j, blk) - 32);
    fill_halves(out, b, s, s);
    for (int i = 0; values && i < kQK; ++i) {
      out.q[size_t(b * kQK + i)] = kIQ4NLValues[iq4_index(blk.qs + 16 * j, i)];
    }
  }
}

// The types above with 32-element blocks (the others have 256-element super-blocks).
bool block_of_32(TensorType t) {
  return t == TensorType::Q4_1 || t == TensorType::Q5_0 || t == TensorType::IQ4_NL ||
         t == TensorType::MXFP4;
}

}  // namespace

bool is_extra_quant_type(TensorType t) {
  switch (t) {
    case TensorType::Q4_1:
    case TensorType::Q5_0:
    case TensorType::IQ4_NL:
    case TensorType::Q2_K:
    case TensorType::Q3_K:
    case TensorType::Q5_K:
    case TensorType::IQ4_XS:
    case TensorType::MXFP4:
      return true;
    default:
      return false;
  }
}

void dequantize_extra(TensorType t, const void* src, float* dst, int64_t n) {
  if (block_of_32(t)) {
    dequantize_small(t, src, dst, n);
  } else {
    dequantize_super(t, src, dst, n);
  }
}

void unpack_extra(TensorType t, const uint8_t* row, int64_t cols, bool values, UnpackedRow& out) {
  if (block_of_32(t)) {
    return unpack_small(t, row, cols / kQK, values, out);
  }
  for (int64_t i = 0; i < cols / kQKK; ++i) {
    switch (t) {
      case TensorType::Q2_K:
        unpack_q2_k(reinterpret_cast<const BlockQ2_K*>(row)[i], 8 * i, values, out);
        break;
      case TensorType::Q3_K:
        unpack_q3_k(reinterpret_cast<const BlockQ3_K*>(row)[i], 8 * i, values, out);
        break;
      case TensorType::Q5_K:
        unpack_q5_k(reinterpret_cast<const BlockQ5_K*>(row)[i], 8 * i, values, out);
        break;
      default:  // IQ4_XS
        unpack_iq4_xs(reinterpret_cast<const BlockIQ4_XS*>(row)[i], 8 * i, values, out);
        break;
    }
  }
}

}  // namespace baton::kernels
