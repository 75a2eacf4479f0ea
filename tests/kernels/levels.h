#pragma once
// Shared pieces of the kernel tests: the SIMD levels this CPU can run, from scalar up (the tests
// compare every one of them), and seeded normal values for activations.
#include <cstdint>
#include <random>
#include <vector>

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

}  // namespace baton::kernels::testing
