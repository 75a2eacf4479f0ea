#pragma once
// The SIMD levels this CPU can run, from scalar up: kernel tests compare every one of them.
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

}  // namespace baton::kernels::testing
