#include "synth/random_fill.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <mutex>
#include <thread>

#include "synth/quant_adapter.h"

namespace baton::synth {

uint64_t hash_name(uint64_t seed, const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull ^ seed;  // FNV-1a, then one splitmix round to spread bits
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return SplitMix64(h).next();
}

namespace {

void fill_rows(const TensorPlan& p, uint64_t tensor_seed, uint64_t row_begin, uint64_t row_end,
               uint8_t* dst) {
  const uint64_t n = p.dims[0];
  const size_t rb = gguf::row_bytes(p.type, n);
  const float half_width = p.stddev * std::sqrt(3.0f);  // uniform on [-a, a] has std a/sqrt(3)
  std::vector<float> row(static_cast<size_t>(n));
  for (uint64_t r = row_begin; r < row_end; ++r) {
    SplitMix64 rng(tensor_seed ^ (r * 0xd1b54a32d192ed03ull));
    for (auto& v : row) v = p.center + (2.0f * rng.uniform() - 1.0f) * half_width;
    encode_row(p.type, row.data(), dst + r * rb, static_cast<int64_t>(n));
  }
}

}  // namespace

void fill_tensor(const TensorPlan& plan, uint64_t seed, int threads, uint8_t* dst, size_t n_bytes) {
  (void)n_bytes;  // the writer sized it from the same dims and type
  uint64_t rows = 1;
  for (size_t k = 1; k < plan.dims.size(); ++k) rows *= plan.dims[k];
  const uint64_t tensor_seed = hash_name(seed, plan.name);
  // Small tensors are not worth a thread start.
  uint64_t elems = rows * plan.dims[0];
  int t = static_cast<int>(std::min<uint64_t>(std::max(1, threads), rows));
  if (elems < (1u << 16)) t = 1;
  if (t == 1) return fill_rows(plan, tensor_seed, 0, rows, dst);
  std::vector<std::thread> pool;
  std::exception_ptr error;
  std::mutex error_mu;
  for (int k = 0; k < t; ++k) {
    uint64_t b = rows * k / t, e = rows * (k + 1) / t;
    pool.emplace_back([&, b, e] {
      try {
        fill_rows(plan, tensor_seed, b, e, dst);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        error = std::current_exception();
      }
    });
  }
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace baton::synth
