#include "kernels/machine_peak.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/intrinsics.h"
#include "kernels/simd.h"

namespace baton::kernels {
namespace {

std::atomic<uint64_t> g_sink{0};  // keeps the measured loops from being optimised away

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

__attribute__((target("avx2"))) uint64_t sum_avx2(const uint8_t* p, size_t n) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i + 128 <= n; i += 128) {
    a0 = _mm256_add_epi64(a0, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    a1 = _mm256_add_epi64(a1, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    a2 = _mm256_add_epi64(a2, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    a3 = _mm256_add_epi64(a3, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  a0 = _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3));
  alignas(32) uint64_t out[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(out), a0);
  return out[0] + out[1] + out[2] + out[3];
}

uint64_t sum_scalar(const uint8_t* p, size_t n) {
  uint64_t s = 0;
  for (size_t i = 0; i + 8 <= n; i += 8) {
    uint64_t v;
    std::memcpy(&v, p + i, 8);
    s += v;
  }
  return s;
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) uint64_t vnni_loop(int64_t iters) {
  __m512i acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_epi32(i);
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-5);
  for (int64_t it = 0; it < iters; ++it) {
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], a, b);
    __asm__ volatile("" : "+v"(acc[0]), "+v"(acc[6]));  // keep the loop from being folded
  }
  __m512i s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_epi32(s, acc[i]);
  alignas(64) int32_t out[16];
  _mm512_store_si512(out, s);
  return uint64_t(uint32_t(out[0])) + uint32_t(out[15]);  // the sums wrap by design
}

__attribute__((target("avx2"))) uint64_t maddubs_loop(int64_t iters) {
  __m256i acc[8];
  for (int i = 0; i < 8; ++i) acc[i] = _mm256_set1_epi32(i);
  const __m256i a = _mm256_set1_epi8(3), b = _mm256_set1_epi8(-5), ones = _mm256_set1_epi16(1);
  for (int64_t it = 0; it < iters; ++it) {
    for (int i = 0; i < 8; ++i) {
      acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), ones));
    }
    __asm__ volatile("" : "+x"(acc[0]), "+x"(acc[4]));
  }
  __m256i s = acc[0];
  for (int i = 1; i < 8; ++i) s = _mm256_add_epi32(s, acc[i]);
  alignas(32) int32_t out[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(out), s);
  return uint64_t(out[0]);
}

uint64_t scalar_mac_loop(int64_t iters) {
  int32_t acc[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  volatile int8_t va = 3, vb = -5;
  const int8_t a = va, b = vb;
  for (int64_t it = 0; it < iters; ++it) {
    for (int i = 0; i < 8; ++i) acc[i] += a * b;
    __asm__ volatile("" : "+r"(acc[0]));
  }
  return uint64_t(uint32_t(acc[0])) + uint32_t(acc[7]);
}

}  // namespace

double measure_read_bandwidth_gbs(ThreadPool& pool, size_t bytes) {
  // Huge pages where the kernel grants them, like the interleaved weights (model/weight_arena):
  // with 4 KiB pages the probe would also count TLB misses that decode no longer pays.
  constexpr size_t kHugePage = size_t(2) << 20;
  bytes = std::max<size_t>(bytes / kHugePage * kHugePage, kHugePage);
  auto* buf = static_cast<uint8_t*>(std::aligned_alloc(kHugePage, bytes));
  if (buf == nullptr) return 0;
  std::unique_ptr<uint8_t, decltype(&std::free)> owner(buf, &std::free);
#ifdef MADV_HUGEPAGE
  madvise(buf, bytes, MADV_HUGEPAGE);  // advice only
#endif
  const int64_t n_threads = pool.size();
  // Each thread touches the pages it will read, so they sit near it on NUMA machines.
  pool.parallel_for(n_threads, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const size_t b = bytes * size_t(t) / size_t(n_threads) & ~size_t(127);
      const size_t e = bytes * size_t(t + 1) / size_t(n_threads) & ~size_t(127);
      std::memset(buf + b, int(t + 1), e - b);
    }
  });
  const bool avx2 = int(active_simd_level()) >= int(SimdLevel::Avx2);
  std::vector<double> gbs;
  for (int run = 0; run < 5; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    pool.parallel_for(n_threads, [&](int64_t t0_, int64_t t1_) {
      for (int64_t t = t0_; t < t1_; ++t) {
        const size_t b = bytes * size_t(t) / size_t(n_threads) & ~size_t(127);
        const size_t e = bytes * size_t(t + 1) / size_t(n_threads) & ~size_t(127);
        g_sink += avx2 ? sum_avx2(buf + b, e - b) : sum_scalar(buf + b, e - b);
      }
    });
    gbs.push_back(double(bytes) / seconds_since(t0) / 1e9);
  }
  return median(gbs);
}

double measure_int8_peak_gops(ThreadPool& pool) {
  const SimdLevel level = active_simd_level();
  // MACs per loop iteration: 12 dpbusd x 64, 8 maddubs x 32, or 8 scalar.
  const double macs_per_iter = level == SimdLevel::Avx512 ? 12 * 64
                               : level == SimdLevel::Avx2 ? 8 * 32
                                                          : 8;
  const int64_t iters = level == SimdLevel::Scalar ? 20'000'000 : 2'000'000;
  const int64_t n_threads = pool.size();
  std::vector<double> gops;
  for (int run = 0; run < 3; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    pool.parallel_for(n_threads, [&](int64_t a, int64_t b) {
      for (int64_t t = a; t < b; ++t) {
        g_sink += level == SimdLevel::Avx512 ? vnni_loop(iters)
                  : level == SimdLevel::Avx2 ? maddubs_loop(iters)
                                             : scalar_mac_loop(iters);
      }
    });
    gops.push_back(2.0 * macs_per_iter * double(iters) * double(n_threads) / seconds_since(t0) /
                   1e9);
  }
  return median(gops);
}

}  // namespace baton::kernels
