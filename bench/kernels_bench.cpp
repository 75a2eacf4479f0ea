// Kernel microbenchmark: machine ceilings, and per weight type matrix-vector bandwidth and GEMM
// throughput.
//   kernels_bench [threads=2] [level=scalar|avx2|avx512]
// Matrix-vector runs cycle over enough matrices to leave the last-level cache, like decode
// over a real model does. At the avx512 level the weights are rewritten into the 16-row tiles,
// as the engine does at load (KB_PLAIN=1 keeps the file's layout); KB_TYPES=name,name picks
// types (e.g. KB_TYPES=q4_K,q6_K).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "kernels/interleave.h"
#include "kernels/machine_peak.h"
#include "kernels/matmul.h"
#include "kernels/quantize.h"
#include "kernels/simd.h"

using namespace baton::kernels;
using baton::gguf::TensorType;

namespace {

// Process CPU seconds: on a shared, oversubscribed box, work per CPU-second (times the thread
// count) approximates what an idle machine would do.
double cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<uint8_t> random_matrix(TensorType t, int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  std::vector<float> row(static_cast<size_t>(cols));
  const size_t rb = kernel_row_bytes(t, cols);
  std::vector<uint8_t> out(rb * size_t(rows));
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : row) v = dist(rng);
    quantize_row(t, row.data(), out.data() + size_t(r) * rb, cols);
  }
  return out;
}

void bench_type(TensorType t, SimdLevel level, ThreadPool& pool, double bw, double peak,
                double peak_cpu) {
  const int64_t rows = 2048, cols = 8192;
  const size_t bytes = kernel_row_bytes(t, cols) * rows;
  // Enough copies to be well past a 260 MB L3; KB_CACHED=1 keeps one (compute-bound view).
  const int n_mats =
      std::getenv("KB_CACHED") != nullptr ? 1 : int(std::max<size_t>(2, (600u << 20) / bytes));
  std::vector<std::vector<uint8_t>> mats;
  // Copies of one matrix: quantizing 600 MB of K-quants would take minutes.
  mats.push_back(random_matrix(t, rows, cols, 1));
  MatrixView first{t, mats[0].data(), rows, cols, bytes / rows};
  const bool tiles =
      level == SimdLevel::Avx512 && interleavable(first) && std::getenv("KB_PLAIN") == nullptr;
  if (tiles) {
    std::vector<uint8_t> tiled(interleaved_bytes(first));
    first = interleave_rows(first, tiled.data(), &pool);
    mats[0] = std::move(tiled);
    first.data = mats[0].data();
  }
  for (int i = 1; i < n_mats; ++i) mats.push_back(mats[0]);
  std::vector<float> x(size_t(512 * cols));
  std::mt19937 rng(7);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (auto& v : x) v = dist(rng);
  std::vector<float> y(size_t(512 * rows));
  auto view = [&](int i) {
    MatrixView v = first;
    v.data = mats[size_t(i)].data();
    return v;
  };

  // Matrix-vector.
  for (int i = 0; i < n_mats; ++i) matmul_at(level, view(i), x.data(), 1, y.data(), &pool);
  const int reps = 3 * n_mats;
  double t0 = now_s();
  for (int i = 0; i < reps; ++i) matmul_at(level, view(i % n_mats), x.data(), 1, y.data(), &pool);
  const double mv_s = (now_s() - t0) / reps;
  const double mv_gbs = double(bytes) / mv_s / 1e9;

  // GEMM, n_x = 512, one matrix (it is reused, as prefill reuses a layer's weights).
  matmul_at(level, view(0), x.data(), 512, y.data(), &pool);
  t0 = now_s();
  const double c0 = cpu_s();
  const int greps = 3;
  for (int i = 0; i < greps; ++i) matmul_at(level, view(0), x.data(), 512, y.data(), &pool);
  const double mm_s = (now_s() - t0) / greps;
  const double mm_cpu = (cpu_s() - c0) / greps / pool.size();
  const double gops = 2.0 * double(rows) * cols * 512 / mm_s / 1e9;
  const double gops_cpu = 2.0 * double(rows) * cols * 512 / mm_cpu / 1e9;
  std::printf(
      "%-6s %s 2048x8192  matvec %7.3f ms %6.2f GB/s (%.2f of read bw)   gemm n_x=512 %8.2f ms "
      "%7.1f "
      "GOPS (%.2f of int8 peak; per CPU-second %.1f GOPS, %.2f of peak)\n",
      std::string(baton::gguf::type_name(t)).c_str(), tiles ? "tiles" : "file ", mv_s * 1e3, mv_gbs,
      mv_gbs / bw, mm_s * 1e3, gops, gops / peak, gops_cpu, gops_cpu / peak_cpu);
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  SimdLevel level = active_simd_level();
  if (argc > 2) {
    const std::string l = argv[2];
    level = l == "scalar" ? SimdLevel::Scalar : l == "avx2" ? SimdLevel::Avx2 : SimdLevel::Avx512;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  ThreadPool pool(threads);
  const double bw = measure_read_bandwidth_gbs(pool);
  const double w0 = now_s(), c0 = cpu_s();
  const double peak = measure_int8_peak_gops(pool);
  const double peak_cpu = peak * (now_s() - w0) / ((cpu_s() - c0) / pool.size());
  std::printf(
      "threads %d, level %s (process %s): read bandwidth %.2f GB/s, int8 peak %.1f GOPS (%.1f per "
      "CPU-second)\n",
      threads, simd_level_label(level), simd_level_name(), bw, peak, peak_cpu);
  {
    // Fixed cost of one parallel_for: a forward pass makes hundreds per token.
    const int calls = 20000;
    const double t0 = now_s();
    for (int i = 0; i < calls; ++i) pool.parallel_for(pool.size(), [](int64_t, int64_t) {});
    std::printf("parallel_for round trip: %.2f us\n", (now_s() - t0) / calls * 1e6);
  }
  const char* only = std::getenv("KB_TYPES");
  for (TensorType t :
       {TensorType::Q8_0, TensorType::Q6_K, TensorType::Q5_K, TensorType::Q5_0, TensorType::Q4_K,
        TensorType::Q4_1, TensorType::Q4_0, TensorType::IQ4_XS, TensorType::IQ4_NL,
        TensorType::MXFP4, TensorType::Q3_K, TensorType::Q2_K, TensorType::F16, TensorType::F32}) {
    const std::string name(baton::gguf::type_name(t));
    std::string wanted = ",";
    if (only != nullptr) wanted += only;
    wanted += ",";
    if (only != nullptr && wanted.find("," + name + ",") == std::string::npos) continue;
    bench_type(t, level, pool, bw, peak, peak_cpu);
  }
  return 0;
}
