#pragma once
// Machine ceilings for `baton bench engine`: how fast this box can stream memory and multiply
// int8, so kernel results can be reported as a fraction of what is possible.
#include <cstddef>

#include "kernels/thread_pool.h"

namespace baton::kernels {

// Streaming read of a buffer larger than the caches by every pool thread; median of a few
// runs, GB/s (1e9 bytes/s).
double measure_read_bandwidth_gbs(ThreadPool& pool, size_t bytes = 1ull << 30);
// int8 multiply-accumulate peak of a register-only VNNI (or AVX2 maddubs) loop on every pool
// thread, GOPS counting one MAC as 2 ops; at the process SIMD level.
double measure_int8_peak_gops(ThreadPool& pool);

}  // namespace baton::kernels
