// Dequantization (the expressions, and so the roundings, of ggml's reference code) and unpacking
// into the matmul form of matmul_impl.h for the 32-element block types (quant_block32.h).
#include <algorithm>
#include <cstring>

#include "kernels/fp16.h"
#include "kernels/matmul_impl.h"
#include "kernels/quant_block32.h"
#include "kernels/quant_levels.h"

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
  return nibble_level(b.qs, i) | int((qh >> i) & 1) << 4;
}

}  // namespace

void dequantize_block32(TensorType t, const void* src, float* y, int64_t n) {
  switch (t) {
    case TensorType::Q8_0:
      return for_blocks<BlockQ8_0>(src, n, kQK, [&](const BlockQ8_0& b) {
        const float d = fp16_to_fp32(b.d);
        for (int j = 0; j < kQK; ++j) *y++ = b.qs[j] * d;
      });
    case TensorType::Q4_0:
      return for_blocks<BlockQ4_0>(src, n, kQK, [&](const BlockQ4_0& b) {
        const float d = fp16_to_fp32(b.d);
        for (int j = 0; j < kQK / 2; ++j) {
          y[j] = ((b.qs[j] & 0x0F) - 8) * d;
          y[j + kQK / 2] = ((b.qs[j] >> 4) - 8) * d;
        }
        y += kQK;
      });
    case TensorType::Q4_1:
      return for_blocks<BlockQ4_1>(src, n, kQK, [&](const BlockQ4_1& b) {
        const float d = fp16_to_fp32(b.d), m = fp16_to_fp32(b.m);
        for (int i = 0; i < kQK; ++i) *y++ = float(nibble_level(b.qs, i)) * d + m;
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
        for (int i = 0; i < kQK; ++i) *y++ = float(kMXFP4Values[nibble_level(b.qs, i)]) * d;
      });
    default:  // IQ4_NL
      return for_blocks<BlockIQ4_NL>(src, n, kQK, [&](const BlockIQ4_NL& b) {
        const float d = fp16_to_fp32(b.d);
        for (int i = 0; i < kQK; ++i) *y++ = d * float(kIQ4NLValues[nibble_level(b.qs, i)]);
      });
  }
}

// Levels are kept unsigned where the type has a min (Q4_1), so the offset is exactly the min and
// needs no rounding of its own.
void unpack_block32(TensorType t, const uint8_t* row, int64_t nb, bool values, UnpackedRow& out) {
  for (int64_t b = 0; b < nb; ++b) {
    int8_t* q = values ? &out.q[size_t(b * kQK)] : nullptr;
    float s = 0;
    if (t == TensorType::Q8_0) {
      const auto& blk = reinterpret_cast<const BlockQ8_0*>(row)[b];
      s = fp16_to_fp32(blk.d);
      if (values) std::memcpy(q, blk.qs, kQK);
    } else if (t == TensorType::Q4_0) {
      const auto& blk = reinterpret_cast<const BlockQ4_0*>(row)[b];
      s = fp16_to_fp32(blk.d);
      for (int i = 0; values && i < kQK; ++i) q[i] = int8_t(nibble_level(blk.qs, i) - 8);
    } else if (t == TensorType::Q4_1) {
      const auto& blk = reinterpret_cast<const BlockQ4_1*>(row)[b];
      s = fp16_to_fp32(blk.d);
      out.off[size_t(b)] = fp16_to_fp32(blk.m);
      for (int i = 0; values && i < kQK; ++i) q[i] = int8_t(nibble_level(blk.qs, i));
    } else if (t == TensorType::Q5_0) {
      const auto& blk = reinterpret_cast<const BlockQ5_0*>(row)[b];
      s = fp16_to_fp32(blk.d);
      const uint32_t qh = q5_0_high_bits(blk);
      for (int i = 0; values && i < kQK; ++i) q[i] = int8_t(q5_0_level(blk, qh, i) - 16);
    } else if (t == TensorType::MXFP4) {
      const auto& blk = reinterpret_cast<const BlockMXFP4*>(row)[b];
      s = e8m0_half(blk.e);
      for (int i = 0; values && i < kQK; ++i) q[i] = kMXFP4Values[nibble_level(blk.qs, i)];
    } else {  // IQ4_NL
      const auto& blk = reinterpret_cast<const BlockIQ4_NL*>(row)[b];
      s = fp16_to_fp32(blk.d);
      for (int i = 0; values && i < kQK; ++i) q[i] = kIQ4NLValues[nibble_level(blk.qs, i)];
    }
    std::fill_n(&out.scale8[size_t(b * 8)], 8, s);
  }
}

}  // namespace baton::kernels
