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
void add_inplace(float* x, const float* y, int64_t n);

}  // namespace baton::model
