#include "model/ops.h"

#include <algorithm>
#include <cmath>

namespace baton::model {

void rms_norm(const float* x, const float* w, int32_t n, float eps, float* out) {
  double ss = 0;  // sequential double sum: exact enough and fixed in order
  for (int32_t i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  const float scale = static_cast<float>(1.0 / std::sqrt(ss / n + eps));
  for (int32_t i = 0; i < n; ++i) out[i] = x[i] * scale * w[i];
}

void silu_mul(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    gate[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void swiglu_oai(float* gate, const float* up, int64_t n, float alpha, float limit) {
  for (int64_t i = 0; i < n; ++i) {
    const float x = std::min(gate[i], limit);
    const float y = std::clamp(up[i], -limit, limit);
    gate[i] = x / (1.0f + std::exp(alpha * -x)) * (y + 1.0f);
  }
}

void gelu_tanh_mul(float* gate, const float* up, int64_t n) {
  constexpr float kSqrt2OverPi = 0.79788456080286535588f, kCoef = 0.044715f;
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    gate[i] = 0.5f * g * (1.0f + std::tanh(kSqrt2OverPi * g * (1.0f + kCoef * g * g))) * up[i];
  }
}

void add_inplace(float* x, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

void hadamard_blocks(float* x, int64_t n, int32_t block) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(block));
  for (int64_t b = 0; b + block <= n; b += block) {
    float* v = x + b;
    for (int32_t len = 1; len < block; len *= 2) {
      for (int32_t i = 0; i < block; i += 2 * len) {
        for (int32_t j = i; j < i + len; ++j) {
          const float a = v[j], c = v[j + len];
          v[j] = a + c;
          v[j + len] = a - c;
        }
      }
    }
    for (int32_t i = 0; i < block; ++i) v[i] *= scale;
  }
}

}  // namespace baton::model
