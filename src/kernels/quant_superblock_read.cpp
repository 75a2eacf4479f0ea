// Dequantization (the expressions, and so the roundings, of ggml's reference code) and unpacking
// into the matmul form of matmul_impl.h for the super-block types (quant_superblock.h).
#include <algorithm>
#include <cstring>

#include "kernels/fp16.h"
#include "kernels/matmul_impl.h"
#include "kernels/quant_levels.h"
#include "kernels/quant_superblock.h"

namespace baton::kernels {
namespace {

using gguf::TensorType;

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

void dequantize_q4_k(const BlockQ4_K& b, float*& y) {
  const float d = fp16_to_fp32(b.d);
  const float min = fp16_to_fp32(b.dmin);
  const uint8_t* q = b.qs;
  for (int j = 0; j < 4; ++j, q += 32) {
    uint8_t sc, m;
    q4k_scale_min(2 * j, b.scales, &sc, &m);
    const float d1 = d * sc, m1 = min * m;
    q4k_scale_min(2 * j + 1, b.scales, &sc, &m);
    const float d2 = d * sc, m2 = min * m;
    for (int l = 0; l < 32; ++l) *y++ = d1 * (q[l] & 0xF) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * (q[l] >> 4) - m2;
  }
}

void dequantize_q6_k(const BlockQ6_K& b, float*& y) {
  const float d = fp16_to_fp32(b.d);
  const uint8_t* ql = b.ql;
  const uint8_t* qh = b.qh;
  const int8_t* sc = b.scales;
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

// Scales of the two 16-element halves of 32-element block b.
void fill_halves(UnpackedRow& out, int64_t b, float s_lo, float s_hi) {
  std::fill_n(&out.scale8[size_t(b * 8)], 4, s_lo);
  std::fill_n(&out.scale8[size_t(b * 8 + 4)], 4, s_hi);
}

// Unpacking. Levels are kept unsigned where the type has a min (Q5_K, Q2_K), so the offset is
// exactly the min and needs no rounding of its own; Q4_K's are shifted down by 8 instead.
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

void unpack_q4_k(const BlockQ4_K& blk, int64_t b0, bool values, UnpackedRow& out) {
  const float d = fp16_to_fp32(blk.d), dmin = fp16_to_fp32(blk.dmin);
  for (int j = 0; j < 8; ++j) {
    const int64_t b = b0 + j;
    uint8_t sc, m;
    q4k_scale_min(j, blk.scales, &sc, &m);
    const float s = d * sc;
    fill_halves(out, b, s, s);
    out.off[size_t(b)] = 8 * s - dmin * m;
    const uint8_t* qs = blk.qs + 32 * (j / 2);
    const int shift = 4 * (j % 2);
    for (int l = 0; values && l < kQK; ++l) {
      out.q[size_t(b * kQK + l)] = int8_t(((qs[l] >> shift) & 0xF) - 8);
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

void unpack_q6_k(const BlockQ6_K& blk, int64_t b0, bool values, UnpackedRow& out) {
  const float d = fp16_to_fp32(blk.d);
  for (int j = 0; j < 8; ++j) {  // 32-element block j: half n, group k of that half
    const int64_t b = b0 + j;
    const int n = j / 4, k = j % 4;
    const uint8_t* ql = blk.ql + 64 * n + 32 * (k & 1);
    const uint8_t* qh = blk.qh + 32 * n;
    const int lshift = 4 * (k >> 1), hshift = 2 * k;
    for (int l = 0; values && l < kQK; ++l) {
      const int v = ((ql[l] >> lshift) & 0xF) | (((qh[l] >> hshift) & 3) << 4);
      out.q[size_t(b * kQK + l)] = int8_t(v - 32);
    }
    fill_halves(out, b, d * blk.scales[2 * j], d * blk.scales[2 * j + 1]);
  }
}

void unpack_iq4_xs(const BlockIQ4_XS& blk, int64_t b0, bool values, UnpackedRow& out) {
  const float d = fp16_to_fp32(blk.d);
  for (int j = 0; j < 8; ++j) {
    const int64_t b = b0 + j;
    const float s = d * float(iq4xs_scale(j, blk) - 32);
    fill_halves(out, b, s, s);
    for (int i = 0; values && i < kQK; ++i) {
      out.q[size_t(b * kQK + i)] = kIQ4NLValues[nibble_level(blk.qs + 16 * j, i)];
    }
  }
}

}  // namespace

void dequantize_superblock(TensorType t, const void* src, float* y, int64_t n) {
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
    case TensorType::Q4_K:
      return for_blocks<BlockQ4_K>(src, n, kQKK,
                                   [&](const BlockQ4_K& b) { dequantize_q4_k(b, y); });
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
    case TensorType::Q6_K:
      return for_blocks<BlockQ6_K>(src, n, kQKK,
                                   [&](const BlockQ6_K& b) { dequantize_q6_k(b, y); });
    default:  // IQ4_XS
      return for_blocks<BlockIQ4_XS>(src, n, kQKK, [&](const BlockIQ4_XS& b) {
        const float d = fp16_to_fp32(b.d);
        for (int j = 0; j < 8; ++j) {
          const float dl = d * float(iq4xs_scale(j, b) - 32);
          for (int i = 0; i < kQK; ++i)
            *y++ = dl * float(kIQ4NLValues[nibble_level(b.qs + 16 * j, i)]);
        }
      });
  }
}

void unpack_superblock(TensorType t, const uint8_t* row, int64_t nsb, bool values,
                       UnpackedRow& out) {
  for (int64_t i = 0; i < nsb; ++i) {
    switch (t) {
      case TensorType::Q2_K:
        unpack_q2_k(reinterpret_cast<const BlockQ2_K*>(row)[i], 8 * i, values, out);
        break;
      case TensorType::Q3_K:
        unpack_q3_k(reinterpret_cast<const BlockQ3_K*>(row)[i], 8 * i, values, out);
        break;
      case TensorType::Q4_K:
        unpack_q4_k(reinterpret_cast<const BlockQ4_K*>(row)[i], 8 * i, values, out);
        break;
      case TensorType::Q5_K:
        unpack_q5_k(reinterpret_cast<const BlockQ5_K*>(row)[i], 8 * i, values, out);
        break;
      case TensorType::Q6_K:
        unpack_q6_k(reinterpret_cast<const BlockQ6_K*>(row)[i], 8 * i, values, out);
        break;
      default:  // IQ4_XS
        unpack_iq4_xs(reinterpret_cast<const BlockIQ4_XS*>(row)[i], 8 * i, values, out);
        break;
    }
  }
}

}  // namespace baton::kernels
