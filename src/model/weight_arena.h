#pragma once
// Weights rewritten at load into the layout the active kernels read fastest (see
// kernels/interleave.h), in one anonymous mapping that asks for transparent huge pages: a decode
// step streams every weight once, and with 4 KiB pages of a file mapping that is one TLB miss
// per page. The file's pages of a rewritten matrix are released, so memory stays one copy.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/thread_pool.h"
#include "model/weights.h"

namespace baton::model {

class WeightArena {
 public:
  explicit WeightArena(size_t bytes);  // throws std::runtime_error when mmap fails
  ~WeightArena();
  WeightArena(const WeightArena&) = delete;
  WeightArena& operator=(const WeightArena&) = delete;
  uint8_t* data() { return base_; }
  size_t size() const { return bytes_; }

 private:
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  uint8_t* base_ = nullptr;
  size_t bytes_ = 0;
};

// Replaces every matrix of w the AVX-512 kernels can read interleaved (all quantized ones) with
// an interleaved copy in a new arena; returns null (and changes nothing) when the process runs
// another SIMD level or no matrix qualifies.
std::unique_ptr<WeightArena> interleave_weights(ModelWeights& w, kernels::ThreadPool* pool);
// The bytes interleave_weights would put in its arena (0 when it would return null), without
// rewriting anything.
size_t interleave_bytes(const ModelWeights& w);

}  // namespace baton::model
