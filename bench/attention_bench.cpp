// Attention microbenchmark: one layer of a llama-1B-shaped attention (32 query heads over 8 KV
// heads of 64 dims, 16 layers of F16 cache, 16-position blocks) for a 128-row prefill chunk and for
// one decode row after `context` cached positions, on one thread, at each SIMD level.
//   attention_bench [level=scalar|avx2|avx512|all] [contexts=512,1024,2048,4096,8192]
// Reports thread CPU ms per layer (medians): on a shared machine CPU time moves less than wall
// time, and one thread is what each core of the forward pass does with its share.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "kernels/simd.h"
#include "model/attention.h"

using namespace baton::model;
using baton::kernels::SimdLevel;

namespace {

constexpr int32_t kHeads = 32, kKvHeads = 8, kHeadDim = 64, kBlock = 16, kTile = 16;
// All 16 layers are allocated, as in the model, so a block's rows of one head sit as far apart
// (512 KB) as they do there; only layer 0 is filled and attended.
constexpr int32_t kLayers = 16;

double thread_cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + 1e-6 * double(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Setup {
  KvCache cache{KvType::F16, kBlock, kLayers, kKvHeads, kHeadDim};
  std::vector<int32_t> table;
  std::vector<float> q, out;
  AttentionShape shape{kHeads, kKvHeads, kHeadDim, 1.0f / std::sqrt(float(kHeadDim))};

  explicit Setup(int32_t n_pos) {
    const int32_t n_blocks = (n_pos + kBlock - 1) / kBlock;
    cache.allocate(n_blocks);
    table.resize(n_blocks);
    for (int32_t b = 0; b < n_blocks; ++b) table[b] = n_blocks - 1 - b;  // not in storage order
    std::mt19937 rng(1);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> k(kKvHeads * kHeadDim), v(k.size());
    for (int32_t p = 0; p < n_pos; ++p) {
      for (auto& x : k) x = nd(rng);
      for (auto& x : v) x = nd(rng);
      cache.write(table[p / kBlock], p % kBlock, 0, k.data(), v.data());
    }
    q.resize(static_cast<size_t>(128) * kHeads * kHeadDim);
    for (auto& x : q) x = 2.0f * nd(rng);
    out.resize(q.size());
  }

  // Every (row tile, KV head) item of n_rows rows starting at position first, as the forward
  // pass splits them; returns thread CPU ms.
  double run(SimdLevel level, int32_t first, int32_t n_rows, AttentionScratch& scratch) {
    std::vector<int32_t> pos(n_rows);
    for (int32_t i = 0; i < n_rows; ++i) pos[i] = first + i;
    const int64_t row = static_cast<int64_t>(kHeads) * kHeadDim;
    const double t0 = thread_cpu_ms();
    for (int32_t r = 0; r < n_rows; r += kTile) {
      for (int32_t h = 0; h < kKvHeads; ++h) {
        attend_rows_at(level, cache, 0, shape, h, q.data() + r * row, pos.data() + r,
                       std::min(kTile, n_rows - r), table.data(), out.data() + r * row, scratch);
      }
    }
    return thread_cpu_ms() - t0;
  }
};

std::vector<int32_t> parse_list(const char* s) {
  std::vector<int32_t> v;
  for (const char* p = s; *p;) {
    v.push_back(std::atoi(p));
    while (*p && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string lv = argc > 1 ? argv[1] : "all";
  const auto contexts = parse_list(argc > 2 ? argv[2] : "512,1024,2048,4096,8192");
  std::vector<std::pair<std::string, SimdLevel>> levels;
  for (auto [name, l] : {std::pair{"scalar", SimdLevel::Scalar},
                         {"avx2", SimdLevel::Avx2},
                         {"avx512", SimdLevel::Avx512}}) {
    if ((lv == "all" || lv == name) && int(l) <= int(baton::kernels::detected_simd_level())) {
      levels.emplace_back(name, l);
    }
  }
  std::printf("%-8s %8s %18s %18s\n", "level", "context", "128-row chunk ms", "decode row ms");
  for (const int32_t ctx : contexts) {
    Setup s(ctx + 128);
    for (const auto& [name, level] : levels) {
      AttentionScratch scratch;
      std::vector<double> chunk, decode;
      const int runs = level == SimdLevel::Scalar ? 1 : 5;
      s.run(level, ctx, 1, scratch);  // warm the scratch and the cache
      for (int k = 0; k < runs; ++k) {
        chunk.push_back(s.run(level, ctx, 128, scratch));
        decode.push_back(s.run(level, ctx, 1, scratch));
      }
      std::printf("%-8s %8d %18.2f %18.3f\n", name.c_str(), ctx, median(chunk), median(decode));
      std::fflush(stdout);
    }
  }
  return 0;
}
