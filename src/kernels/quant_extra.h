#pragma once
// Q4_1 Q5_0 IQ4_NL Q2_K Q3_K Q5_K IQ4_XS MXFP4: dequantization (ggml's reference arithmetic, bit
// for bit) and unpacking into the matmul form of matmul_impl.h. Internal to the kernels module.
#include <cstdint>

#include "gguf/tensor_type.h"

namespace baton::kernels {

struct UnpackedRow;

// True for the types this file handles.
bool is_extra_quant_type(gguf::TensorType t);

// n elements of type t (a multiple of its block size) from src into dst.
void dequantize_extra(gguf::TensorType t, const void* src, float* dst, int64_t n);

// unpack_row for the types above; out's vectors are already sized (off2 only for Q2_K).
void unpack_extra(gguf::TensorType t, const uint8_t* row, int64_t cols, bool values,
                  UnpackedRow& out);

}  // namespace baton::kernels
