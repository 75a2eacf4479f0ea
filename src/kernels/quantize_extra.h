#pragma once
// Quantizers of Q4_1 Q5_0 IQ4_NL Q2_K Q3_K Q5_K IQ4_XS MXFP4 (internal; quantize_row dispatches
// here). Their blocks read back through dequantize_extra (quant_extra.h), the format's reference.
#include <cstdint>

#include "gguf/tensor_type.h"

namespace baton::kernels {

// n elements of x (a multiple of t's block size) into blocks of type t; t must be one of the
// types above (is_extra_quant_type).
void quantize_extra(gguf::TensorType t, const float* x, void* dst, int64_t n);

}  // namespace baton::kernels
