#pragma once
// Shared pieces of the kernel tests: the SIMD levels this CPU can run, from scalar up (the tests
// compare every one of them), seeded normal values for activations, and quantization round
// trips.
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/quantize.h"
#include "kernels/simd.h"

namespace baton::kernels::testing {

inline std::vector<SimdLevel> available_levels() {
  std::vector<SimdLevel> out;
  for (int l = 0; l <= static_cast<int>(detected_simd_level()); ++l) {
    out.push_back(static_cast<SimdLevel>(l));
  }
  return out;
}

inline std::vector<float> random_values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = dist(rng);
  return v;
}

// x through quantize_row and back through dequantize_row.
inline std::vector<float> round_trip(gguf::TensorType t, const std::vector<float>& x) {
  std::vector<uint8_t> q(kernel_row_bytes(t, int64_t(x.size())));
  quantize_row(t, x.data(), q.data(), int64_t(x.size()));
  std::vector<float> y(x.size());
  dequantize_row(t, q.data(), y.data(), int64_t(x.size()));
  return y;
}

}  // namespace baton::kernels::testing
