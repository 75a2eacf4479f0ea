#include "kernels/quantize.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/blocks.h"
#include "kernels/fp16.h"
#include "kernels/quant_block32.h"
#include "kernels/quant_superblock.h"

namespace baton::kernels {
namespace {

using gguf::TensorType;

std::string type_label(TensorType t) {
  return "type id " + std::to_string(uint32_t(t));
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
  kernel_row_bytes(t, n);  // throws for an unsupported type or a partial block
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
    default:  // kernel_row_bytes threw for anything else
      if (is_block32_type(t)) return quantize_block32(t, src, dst, n);
      return quantize_superblock(t, src, dst, n);
  }
}

void dequantize_row(TensorType t, const void* src, float* dst, int64_t n) {
  kernel_row_bytes(t, n);  // throws for an unsupported type or a partial block
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
    default:  // kernel_row_bytes threw for anything else
      if (is_block32_type(t)) return dequantize_block32(t, src, dst, n);
      return dequantize_superblock(t, src, dst, n);
  }
}

}  // namespace baton::kernels
