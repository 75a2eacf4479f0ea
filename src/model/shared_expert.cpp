#include "model/shared_expert.h"

#include <algorithm>
#include <cmath>

#include "model/ops.h"

namespace baton::model {

void add_shared_expert(const SharedExpertWeights& w, int64_t n_embd, const float* xn, int64_t n,
                       float* out, SharedExpertScratch& s, kernels::ThreadPool* pool) {
  const int64_t E = n_embd, F = w.down.cols;
  s.gate.resize(n * F);
  if (w.gate_up.data != nullptr) {
    s.fused.resize(n * 2 * F);
    kernels::matmul(w.gate_up, xn, n, s.fused.data(), pool);
    for (int64_t r = 0; r < n; ++r) {
      float* row = s.fused.data() + r * 2 * F;
      silu_mul(row, row + F, F);
      std::copy(row, row + F, s.gate.data() + r * F);
    }
  } else {
    s.up.resize(n * F);
    kernels::MatmulJob jobs[] = {{w.gate, xn, n, s.gate.data()}, {w.up, xn, n, s.up.data()}};
    kernels::matmul_many(jobs, 2, pool);
    for (int64_t r = 0; r < n; ++r) silu_mul(s.gate.data() + r * F, s.up.data() + r * F, F);
  }
  s.y.resize(n * E);
  kernels::matmul(w.down, s.gate.data(), n, s.y.data(), pool);
  for (int64_t r = 0; r < n; ++r) {
    const float* x = xn + r * E;
    double dot = 0;  // in order, in double: the gate is one number per token
    for (int64_t i = 0; i < E; ++i) dot += static_cast<double>(w.scale[i]) * x[i];
    const float g = 1.0f / (1.0f + std::exp(-static_cast<float>(dot)));
    const float* y = s.y.data() + r * E;
    float* o = out + r * E;
    for (int64_t i = 0; i < E; ++i) o[i] += y[i] * g;
  }
}

}  // namespace baton::model
