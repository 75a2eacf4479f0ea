#pragma once
// The sampler part of `baton bench engine`: time per Sampler::sample call on random logits,
// for the sampling settings requests actually use.
#include <cstdint>
#include <string>
#include <vector>

namespace baton::cli {

struct SamplerBenchRow {
  std::string config;  // which settings, e.g. "greedy" or "T0.8 k40 p0.95"
  int32_t n_vocab = 0;
  double us_per_call = 0;  // median
  int32_t calls = 0;
};

// Each configuration on each vocabulary size; every call is timed on its own, medians reported.
std::vector<SamplerBenchRow> bench_sampler(const std::vector<int32_t>& vocab_sizes);

}  // namespace baton::cli
