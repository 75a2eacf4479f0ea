// Kernel microbenchmark: machine ceilings, and per weight type matrix-vector bandwidth and GEMM
// throughput.
//   kernels_bench [threads=2] [level=scalar|avx2|avx512]
// Matrix-vector runs cycle over enough matrices to leave the last-level cache, like decode
// over a real model does. At the avx512 level the weights are rewritten into the 16-row tiles,
// as the engine does at load (KB_PLAIN=1 keeps the file's layout); KB_TYPES=name,name picks
// types (e.g. KB_TYPES=q4_K,q6_K). KB_MOE=1 adds a mixture-of-experts decode row per type: 8 of
// 128 experts of Qwen3-30B-A3B's shape (gate and up fused 1536x2048, down 2048x768), picked at
// random per token and run as the engine runs them (matmul_many), against the same bytes read as
// one matrix. KB_BATCH=1 adds, per type, the time of one uncached matrix against the number of x
// rows (a mixed step's decode rows plus its prefill chunk): where streaming the weights and the
// rows' arithmetic stop overlapping, each added row costs more than a large batch's share.
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
  const int64_t rows = 2048,
                cols = std::getenv("KB_COLS") ? std::atoll(std::getenv("KB_COLS")) : 8192;
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
  if (std::getenv("KB_BATCH") != nullptr) {
    const double per_row_large = mm_s / 512;
    for (int n_x : {1, 2, 4, 8, 12, 16, 20, 24, 32, 48, 64}) {
      for (int i = 0; i < n_mats; ++i) matmul_at(level, view(i), x.data(), n_x, y.data(), &pool);
      const int breps = std::max(2 * n_mats, 8);
      const double b0 = now_s();
      for (int i = 0; i < breps; ++i) {
        matmul_at(level, view(i % n_mats), x.data(), n_x, y.data(), &pool);
      }
      const double b_s = (now_s() - b0) / breps;
      std::printf(
          "%-6s n_x=%-3d uncached %7.3f ms = matvec + %6.3f ms per added row (%.2fx a 512-row "
          "batch's %.3f ms)\n",
          std::string(baton::gguf::type_name(t)).c_str(), n_x, b_s * 1e3,
          n_x > 1 ? (b_s - mv_s) / (n_x - 1) * 1e3 : 0.0,
          n_x > 1 ? (b_s - mv_s) / (n_x - 1) / per_row_large : 0.0, per_row_large * 1e3);
    }
  }
  std::printf(
      "%-6s %s 2048x8192  matvec %7.3f ms %6.2f GB/s (%.2f of read bw)   gemm n_x=512 %8.2f ms "
      "%7.1f "
      "GOPS (%.2f of int8 peak; per CPU-second %.1f GOPS, %.2f of peak)\n",
      std::string(baton::gguf::type_name(t)).c_str(), tiles ? "tiles" : "file ", mv_s * 1e3, mv_gbs,
      mv_gbs / bw, mm_s * 1e3, gops, gops / peak, gops_cpu, gops_cpu / peak_cpu);
}

MatrixView make_view(TensorType t, SimdLevel level, int64_t rows, int64_t cols,
                     std::vector<uint8_t>& storage, ThreadPool& pool) {
  storage = random_matrix(t, rows, cols, uint32_t(rows + cols));
  MatrixView v{t, storage.data(), rows, cols, storage.size() / size_t(rows)};
  if (level == SimdLevel::Avx512 && interleavable(v) && std::getenv("KB_PLAIN") == nullptr) {
    std::vector<uint8_t> tiled(interleaved_bytes(v));
    v = interleave_rows(v, tiled.data(), &pool);
    storage = std::move(tiled);
    v.data = storage.data();
  }
  return v;
}

// One decode row through 8 of 128 experts per token, as model/moe.cpp runs it.
void bench_experts(TensorType t, SimdLevel level, ThreadPool& pool, double bw) {
  constexpr int kExperts = 128, kUsed = 8;
  constexpr int64_t E = 2048, F = 768;
  std::vector<uint8_t> gu0, dn0;
  const MatrixView gu = make_view(t, level, 2 * F, E, gu0, pool);
  const MatrixView dn = make_view(t, level, E, F, dn0, pool);
  std::vector<std::vector<uint8_t>> gus(kExperts, gu0), dns(kExperts, dn0);
  std::vector<float> x(size_t(E), 0.5f), h(size_t(kUsed * F), 0.25f);
  std::vector<float> y1(size_t(kUsed * 2 * F)), y2(size_t(kUsed * E));
  std::mt19937 rng(11);
  std::vector<int> ids(kExperts);
  for (int i = 0; i < kExperts; ++i) ids[size_t(i)] = i;
  const size_t token_bytes = size_t(kUsed) * (gu0.size() + dn0.size());
  auto token = [&] {
    std::shuffle(ids.begin(), ids.end(), rng);
    std::vector<MatmulJob> a, b;
    for (int j = 0; j < kUsed; ++j) {
      MatrixView g = gu, d = dn;
      g.data = gus[size_t(ids[size_t(j)])].data();
      d.data = dns[size_t(ids[size_t(j)])].data();
      a.push_back({g, x.data(), 1, y1.data() + j * 2 * F});
      b.push_back({d, h.data() + j * F, 1, y2.data() + j * E});
    }
    matmul_many(a.data(), a.size(), &pool);
    matmul_many(b.data(), b.size(), &pool);
  };
  for (int i = 0; i < 20; ++i) token();
  const int reps = 400;
  const double t0 = now_s();
  for (int i = 0; i < reps; ++i) token();
  const double s = (now_s() - t0) / reps;
  const double gbs = double(token_bytes) / s / 1e9;
  std::printf(
      "%-6s experts 8 of 128 (1536x2048 + 2048x768)  %7.3f ms/token %6.2f GB/s (%.2f of "
      "read bw)\n",
      std::string(baton::gguf::type_name(t)).c_str(), s * 1e3, gbs, gbs / bw);
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
    if (std::getenv("KB_MOE") != nullptr && t != TensorType::F16 && t != TensorType::F32) {
      bench_experts(t, level, pool, bw);
    }
  }
  return 0;
}
