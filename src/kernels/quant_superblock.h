#pragma once
// The types with 256-element super-blocks: Q2_K Q3_K Q4_K Q5_K Q6_K (integer levels under
// sub-block scales that are multiples of the super-block's) and IQ4_XS (the IQ4 value table under
// 6-bit sub-block scales). Internal to the kernels module: quantize_row, dequantize_row and
// unpack_row dispatch here.
#include <cstdint>

#include "gguf/tensor_type.h"

namespace baton::kernels {

struct UnpackedRow;

bool is_superblock_type(gguf::TensorType t);

// n elements (a multiple of 256) of x into blocks of type t (quant_superblock_write.cpp).
void quantize_superblock(gguf::TensorType t, const float* x, void* dst, int64_t n);
// n elements of type t from src into y: ggml's reference arithmetic, bit for bit.
void dequantize_superblock(gguf::TensorType t, const void* src, float* y, int64_t n);
// unpack_row for these types: nsb super-blocks of the row into out, whose vectors are already
// sized (off2 only for Q2_K).
void unpack_superblock(gguf::TensorType t, const uint8_t* row, int64_t nsb, bool values,
                       UnpackedRow& out);

}  // namespace baton::kernels
