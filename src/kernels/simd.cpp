#include "kernels/simd.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <cstdlib>
#include <string>

#include "util/log.h"

namespace baton::kernels {

#if defined(__x86_64__) || defined(__i386__)
namespace {

// Read from CPUID itself: clang before 15 has no "f16c" for __builtin_cpu_supports (the fuzz
// preset builds with the distribution's clang).
bool cpu_has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
}

}  // namespace
#endif

SimdLevel detected_simd_level() {
#if defined(__x86_64__) || defined(__i386__)
  static const SimdLevel level = [] {
    __builtin_cpu_init();
    const bool avx2 =
        __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c();
    const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                        __builtin_cpu_supports("avx512vnni");
    return avx512 ? SimdLevel::Avx512 : avx2 ? SimdLevel::Avx2 : SimdLevel::Scalar;
  }();
  return level;
#else
  return SimdLevel::Scalar;
#endif
}

SimdLevel active_simd_level() {
  static const SimdLevel level = [] {
    const SimdLevel hw = detected_simd_level();
    const char* env = std::getenv("BATON_SIMD");
    if (env == nullptr || *env == 0) return hw;
    const std::string v = env;
    SimdLevel want = hw;
    if (v == "scalar") {
      want = SimdLevel::Scalar;
    } else if (v == "avx2") {
      want = SimdLevel::Avx2;
    } else if (v == "avx512") {
      want = SimdLevel::Avx512;
    } else {
      log::warn("BATON_SIMD={} ignored: expected scalar, avx2 or avx512; using {}", v,
                simd_level_label(hw));
      return hw;
    }
    if (int(want) > int(hw)) {
      log::warn("BATON_SIMD={} is above what this CPU supports; using {}", v, simd_level_label(hw));
      return hw;
    }
    return want;
  }();
  return level;
}

const char* simd_level_label(SimdLevel l) {
  switch (l) {
    case SimdLevel::Avx512:
      return "avx512-vnni";
    case SimdLevel::Avx2:
      return "avx2";
    default:
      return "scalar";
  }
}

const char* simd_level_name() {
  return simd_level_label(active_simd_level());
}

}  // namespace baton::kernels
