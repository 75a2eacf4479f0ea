#pragma once
// IEEE half and bfloat16 scalar conversions. Both directions round to nearest even and keep
// infinities and NaNs, bit-exact with ggml so tensors read from llama.cpp files match.
#include <cstdint>

namespace baton::kernels {

float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f);
float bf16_to_fp32(uint16_t h);
uint16_t fp32_to_bf16(float f);

}  // namespace baton::kernels
