#pragma once
// The one place synth turns float rows into tensor bytes. It uses the kernels' quantizers when
// kernels/quantize.h exists and small local reference versions otherwise, so synth can be built
// and tested before (and independently of) the kernels.
#include <cstdint>

#include "gguf/tensor_type.h"

namespace baton::synth {

// n must be a multiple of the type's block size; dst holds row_bytes(t, n) bytes.
void encode_row(gguf::TensorType t, const float* src, void* dst, int64_t n);

// IEEE half from float, round to nearest even (the local fallback for kernels/fp16.h).
uint16_t float_to_half(float f);

}  // namespace baton::synth
