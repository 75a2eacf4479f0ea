#pragma once
// The types with 32-element blocks and one scale each: Q8_0 Q4_0 Q4_1 Q5_0 (integer levels),
// IQ4_NL (the IQ4 value table) and MXFP4 (the FP4 table under a power-of-two scale). Internal to
// the kernels module: quantize_row, dequantize_row and unpack_row dispatch here.
#include <cstdint>

#include "gguf/tensor_type.h"

namespace baton::kernels {

struct UnpackedRow;

bool is_block32_type(gguf::TensorType t);

// n elements (a multiple of 32) of x into blocks of type t (quant_block32_write.cpp).
void quantize_block32(gguf::TensorType t, const float* x, void* dst, int64_t n);
// n elements of type t from src into y: ggml's reference arithmetic, bit for bit.
void dequantize_block32(gguf::TensorType t, const void* src, float* y, int64_t n);
// unpack_row for these types: nb blocks of the row into out, whose vectors are already sized.
void unpack_block32(gguf::TensorType t, const uint8_t* row, int64_t nb, bool values,
                    UnpackedRow& out);

}  // namespace baton::kernels
