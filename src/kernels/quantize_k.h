#pragma once
// Q4_K and Q6_K row conversions (internal; quantize_row / dequantize_row dispatch here).
#include <cstdint>

#include "kernels/blocks.h"

namespace baton::kernels {

void quantize_q4_k(const float* x, BlockQ4_K* y, int64_t nb);
void dequantize_q4_k(const BlockQ4_K* x, float* y, int64_t nb);
void quantize_q6_k(const float* x, BlockQ6_K* y, int64_t nb);
void dequantize_q6_k(const BlockQ6_K* x, float* y, int64_t nb);

}  // namespace baton::kernels
