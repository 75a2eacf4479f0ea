#pragma once
// Deterministic random tensor contents. Every row has its own generator seeded from (model
// seed, tensor name, row index), so the bytes depend neither on the thread count nor on the
// order tensors are produced in. Uses its own splitmix64 and uniform draws (no <random>
// distributions, whose output differs between standard libraries).
#include <cstdint>
#include <string>
#include <vector>

#include "gguf/tensor_type.h"

namespace baton::synth {

struct TensorPlan {
  std::string name;
  gguf::TensorType type;
  std::vector<uint64_t> dims;  // ne0 first
  float center = 0;            // mean of the values (1 for norm weights)
  float stddev = 0;            // of a uniform draw around center
};

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 24 bits: exact in float, identical everywhere.
  float uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }

 private:
  uint64_t s_;
};

uint64_t hash_name(uint64_t seed, const std::string& name);

// Fills dst (row_bytes(type, dims[0]) × rows bytes) with the tensor's encoded random values.
void fill_tensor(const TensorPlan& plan, uint64_t seed, int threads, uint8_t* dst, size_t n_bytes);

}  // namespace baton::synth
