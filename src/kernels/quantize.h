#pragma once
// Row conversions between f32 and every tensor type the kernels support:
// F32 F16 BF16 Q8_0 Q5_0 Q4_0 Q4_1 IQ4_NL Q2_K Q3_K Q4_K Q5_K Q6_K IQ4_XS MXFP4, in both
// directions. Dequantization matches ggml's reference bit for bit. Quantization rounds each level
// to nearest against a scale that is either the block's extreme over the widest level (Q8_0,
// Q4_0, Q6_K), searched per (sub-)block among a few candidates refitted by least squares (Q4_1
// Q5_0 IQ4_NL Q2_K Q3_K Q4_K Q5_K IQ4_XS: see quantize_search.h), or for MXFP4 the power of two
// of least squared error among the block extreme's and its neighbours; no importance matrix.
#include <cstddef>
#include <cstdint>

#include "gguf/tensor_type.h"

namespace baton::kernels {

// n must be a multiple of the type's block size; throws std::invalid_argument otherwise or for
// an unsupported type. Finite inputs of any magnitude quantize without undefined behaviour;
// magnitudes beyond what the f16 scales reach saturate (about 65504 times the widest level)
// or flush to zero (below about 6e-8 times it).
void quantize_row(gguf::TensorType t, const float* src, void* dst, int64_t n);
void dequantize_row(gguf::TensorType t, const void* src, float* dst, int64_t n);

// Block geometry of the supported types (0 elements for unsupported ones), without needing the
// gguf module's trait table.
struct BlockShape {
  int64_t elems = 0;
  int64_t bytes = 0;
};
BlockShape block_shape(gguf::TensorType t);
// Bytes of a row of n elements; throws std::invalid_argument like quantize_row.
size_t kernel_row_bytes(gguf::TensorType t, int64_t n);

}  // namespace baton::kernels
