#pragma once
// Run-time SIMD level selection (internal to kernels; tests use it to force each level).
#include <cstdint>

#include "kernels/matmul.h"

namespace baton::kernels {

enum class SimdLevel { Scalar = 0, Avx2 = 1, Avx512 = 2 };

// Highest level this CPU supports (AVX2 means avx2+fma+f16c; AVX512 adds f, bw, vl, vnni).
SimdLevel detected_simd_level();
// The process-wide level: detected, lowered by env BATON_SIMD=scalar|avx2|avx512 (a level above
// the CPU's is refused with a warning). Fixed at first use.
SimdLevel active_simd_level();
const char* simd_level_label(SimdLevel l);

// matmul at an explicit level (clamped to what the CPU supports), for tests and benchmarks.
void matmul_at(SimdLevel level, const MatrixView& w, const float* x, int64_t n_x, float* y,
               ThreadPool* pool);

}  // namespace baton::kernels
