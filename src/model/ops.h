#pragma once
// Row-wise float ops of the forward pass. Each reduces within one row in a fixed order.
#include <cstdint>

namespace baton::model {

// out = x / rms(x) * w over n elements (out may alias x).
void rms_norm(const float* x, const float* w, int32_t n, float eps, float* out);
// gate[i] = silu(gate[i]) * up[i]
void silu_mul(float* gate, const float* up, int64_t n);
// gpt-oss's clamped SwiGLU: x = min(gate[i], limit), y = clamp(up[i], -limit, limit),
// gate[i] = x * sigmoid(alpha x) * (y + 1).
void swiglu_oai(float* gate, const float* up, int64_t n, float alpha, float limit);
// gemma3's GELU-gated FFN: gate[i] = gelu(gate[i]) * up[i], GELU in its tanh form
// 0.5 g (1 + tanh(sqrt(2/pi) g (1 + 0.044715 g^2))).
void gelu_tanh_mul(float* gate, const float* up, int64_t n);
void add_inplace(float* x, const float* y, int64_t n);
// Multiplies each run of `block` floats of x[0..n) (block a power of two) by the orthonormal
// Walsh-Hadamard matrix of that size (Sylvester's order, scaled by 1/sqrt(block)); the matrix
// is symmetric and its own inverse, and keeps dot products of vectors rotated alike.
void hadamard_blocks(float* x, int64_t n, int32_t block);

// sum a[i] * b[i] in eight fixed lanes then a fixed combine: vectorizable, and the same bits for
// the same inputs whatever the caller (attention's scalar reference, the delta rule).
inline float fixed_order_dot(const float* a, const float* b, int32_t n) {
  float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) lane[j] += a[i + j] * b[i + j];
  }
  float tail = 0;
  for (; i < n; ++i) tail += a[i] * b[i];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7])) +
         tail;
}

}  // namespace baton::model
