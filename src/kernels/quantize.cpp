#include "kernels/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/blocks.h"
#include "kernels/fp16.h"
#include "kernels/quant_extra.h"
#include "kernels/quantize_extra.h"
#include "kernels/quantize_k.h"
#include "kernels/quantize_search.h"

namespace baton::kernels {
namespace {

using gguf::TensorType;

std::string type_label(TensorType t) {
  return "type id " + std::to_string(uint32_t(t));
}

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

void dequantize_q8_0(const BlockQ8_0* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = fp16_to_fp32(x[i].d);
    for (int j = 0; j < kQK; ++j) y[j] = x[i].qs[j] * d;
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

void dequantize_q4_0(const BlockQ4_0* x, float* y, int64_t nb) {
  for (int64_t i = 0; i < nb; ++i, y += kQK) {
    const float d = fp16_to_fp32(x[i].d);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = ((x[i].qs[j] & 0x0F) - 8) * d;
      y[j + kQK / 2] = ((x[i].qs[j] >> 4) - 8) * d;
    }
  }
}

}  // namespace

BlockShape block_shape(TensorType t) {
  switch (t) {
    case TensorType::F32:
      return {1, 4};
    case TensorType::F16:
      return {1, 2};
    case TensorType::BF16:
      return {1, 2};
    case TensorType::Q8_0:
      return {kQK, sizeof(BlockQ8_0)};
    case TensorType::Q4_0:
      return {kQK, sizeof(BlockQ4_0)};
    case TensorType::Q4_K:
      return {kQKK, sizeof(BlockQ4_K)};
    case TensorType::Q6_K:
      return {kQKK, sizeof(BlockQ6_K)};
    case TensorType::Q4_1:
      return {kQK, sizeof(BlockQ4_1)};
    case TensorType::Q5_0:
      return {kQK, sizeof(BlockQ5_0)};
    case TensorType::IQ4_NL:
      return {kQK, sizeof(BlockIQ4_NL)};
    case TensorType::Q2_K:
      return {kQKK, sizeof(BlockQ2_K)};
    case TensorType::Q3_K:
      return {kQKK, sizeof(BlockQ3_K)};
    case TensorType::Q5_K:
      return {kQKK, sizeof(BlockQ5_K)};
    case TensorType::IQ4_XS:
      return {kQKK, sizeof(BlockIQ4_XS)};
    case TensorType::MXFP4:
      return {kQK, sizeof(BlockMXFP4)};
    default:
      return {};
  }
}

size_t kernel_row_bytes(TensorType t, int64_t n) {
  const BlockShape s = block_shape(t);
  if (s.elems == 0) {
    throw std::invalid_argument(
        "kernels: tensor " + type_label(t) +
        " is not supported (expected f32 f16 bf16 q8_0 q5_0 q4_0 q4_1 iq4_nl "
        "q2_K q3_K q4_K q5_K q6_K iq4_xs mxfp4)");
  }
  if (n < 0 || n % s.elems != 0) {
    throw std::invalid_argument("kernels: row length " + std::to_string(n) + " of " +
                                type_label(t) + " must be a multiple of its block size " +
                                std::to_string(s.elems));
  }
  return size_t(n / s.elems * s.bytes);
}

void quantize_row(TensorType t, const float* src, void* dst, int64_t n) {
  const int64_t nb = int64_t(kernel_row_bytes(t, n)) / block_shape(t).bytes;
  switch (t) {
    case TensorType::F32:
      std::memcpy(dst, src, size_t(n) * 4);
      break;
    case TensorType::F16: {
      auto* d = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = fp32_to_fp16(src[i]);
      break;
    }
    case TensorType::BF16: {
      auto* d = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) d[i] = fp32_to_bf16(src[i]);
      break;
    }
    case TensorType::Q8_0:
      quantize_q8_0(src, static_cast<BlockQ8_0*>(dst), nb);
      break;
    case TensorType::Q4_0:
      quantize_q4_0(src, static_cast<BlockQ4_0*>(dst), nb);
      break;
    case TensorType::Q4_K:
      quantize_q4_k(src, static_cast<BlockQ4_K*>(dst), nb);
      break;
    case TensorType::Q6_K:
      quantize_q6_k(src, static_cast<BlockQ6_K*>(dst), nb);
      break;
    default:  // kernel_row_bytes threw for anything else
      quantize_extra(t, src, dst, n);
      break;
  }
}

void dequantize_row(TensorType t, const void* src, float* dst, int64_t n) {
  const int64_t nb = int64_t(kernel_row_bytes(t, n)) / block_shape(t).bytes;
  switch (t) {
    case TensorType::F32:
      std::memcpy(dst, src, size_t(n) * 4);
      break;
    case TensorType::F16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = fp16_to_fp32(s[i]);
      break;
    }
    case TensorType::BF16: {
      const auto* s = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) dst[i] = bf16_to_fp32(s[i]);
      break;
    }
    case TensorType::Q8_0:
      dequantize_q8_0(static_cast<const BlockQ8_0*>(src), dst, nb);
      break;
    case TensorType::Q4_0:
      dequantize_q4_0(static_cast<const BlockQ4_0*>(src), dst, nb);
      break;
    case TensorType::Q4_K:
      dequantize_q4_k(static_cast<const BlockQ4_K*>(src), dst, nb);
      break;
    case TensorType::Q6_K:
      dequantize_q6_k(static_cast<const BlockQ6_K*>(src), dst, nb);
      break;
    default:  // kernel_row_bytes threw for anything else
      dequantize_extra(t, src, dst, n);
      break;
  }
}

}  // namespace baton::kernels
