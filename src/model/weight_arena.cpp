#include "model/weight_arena.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/interleave.h"
#include "kernels/simd.h"

namespace baton::model {
namespace {

constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kAlign = 64;

size_t round_up(size_t n, size_t a) {
  return (n + a - 1) / a * a;
}

// Drops this process's pages of a file-mapped range (the page cache keeps them; a later read
// faults them back in).
void release_pages(const void* data, size_t bytes) {
  const auto page = uintptr_t(sysconf(_SC_PAGESIZE));
  const auto begin = (uintptr_t(data) + page - 1) & ~(page - 1);
  const auto end = (uintptr_t(data) + bytes) & ~(page - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

// Releases the file's pages of the rewritten matrices once more, with ranges that touch (the
// experts of one tensor) merged: the pages they share at their edges go too.
void release_ranges(std::vector<std::pair<const uint8_t*, size_t>>& ranges) {
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 0; i < ranges.size();) {
    const uint8_t* begin = ranges[i].first;
    const uint8_t* end = begin + ranges[i].second;
    for (++i; i < ranges.size() && ranges[i].first <= end; ++i) {
      end = std::max(end, ranges[i].first + ranges[i].second);
    }
    release_pages(begin, static_cast<size_t>(end - begin));
  }
}

// Matrices that multiply the same activations, in the order they are stored; `stacked` (when
// not null) receives the view of the whole group when its parts can sit back to back.
struct Group {
  std::vector<kernels::MatrixView*> parts;
  kernels::MatrixView* stacked = nullptr;
};

std::vector<Group> groups_of(ModelWeights& w) {
  std::vector<Group> out;
  for (auto& l : w.layers) {
    out.push_back({{&l.wq, &l.wk, &l.wv}, &l.wqkv});
    out.push_back({{&l.wo}});
    for (auto* m :
         {&l.dnet.qkv, &l.dnet.z, &l.dnet.beta, &l.dnet.alpha, &l.dnet.beta_alpha, &l.dnet.out}) {
      out.push_back({{m}});
    }
    if (l.ffn == FfnKind::Dense) {
      out.push_back({{&l.w_gate, &l.w_up}, &l.w_gate_up});
      out.push_back({{&l.w_down}});
      continue;
    }
    // Each expert is its own group: a step reads only the experts its tokens chose, and each
    // one's gate and up rows stream as one matrix.
    out.push_back({{&l.moe.router}});
    out.push_back({{&l.moe.shared.gate, &l.moe.shared.up}, &l.moe.shared.gate_up});
    out.push_back({{&l.moe.shared.down}});
    for (size_t e = 0; e < l.moe.gate.size(); ++e) {
      out.push_back({{&l.moe.gate[e], &l.moe.up[e]}, &l.moe.gate_up[e]});
      out.push_back({{&l.moe.down[e]}});
    }
  }
  out.push_back({{&w.output}});
  return out;
}

// Interleaved parts stacked back to back form one interleaved matrix when they share type and
// width and every part fills whole tiles.
bool stackable(const Group& g) {
  if (g.stacked == nullptr) return false;
  for (const auto* m : g.parts) {
    if (!kernels::interleavable(*m) || m->rows % kernels::kInterleaveRows != 0 ||
        m->type != g.parts[0]->type || m->cols != g.parts[0]->cols) {
      return false;
    }
  }
  return true;
}

// Arena bytes one interleaved part takes: stacked parts sit back to back, the others start
// cache-line aligned.
size_t placed_bytes(const kernels::MatrixView& m, bool stacked) {
  const size_t n = kernels::interleaved_bytes(m);
  return stacked ? n : round_up(n, kAlign);
}

size_t group_bytes(const Group& g) {
  const bool stack = stackable(g);
  size_t n = 0;
  for (const auto* m : g.parts) {
    if (kernels::interleavable(*m)) n += placed_bytes(*m, stack);
  }
  return round_up(n, kAlign);
}

}  // namespace

WeightArena::WeightArena(size_t bytes) : bytes_(bytes) {
  map_bytes_ = round_up(bytes, kHugePage) + kHugePage;
  map_ = mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw std::runtime_error("cannot map " + std::to_string(bytes >> 20) +
                             " MB for the interleaved weights: " + std::strerror(errno) +
                             " (free memory, or run with BATON_SIMD=avx2 to use the file's "
                             "layout)");
  }
  base_ = reinterpret_cast<uint8_t*>(round_up(uintptr_t(map_), kHugePage));
#ifdef MADV_HUGEPAGE
  madvise(base_, round_up(bytes, kHugePage), MADV_HUGEPAGE);  // advice only; fine if refused
#endif
}

WeightArena::~WeightArena() {
  if (map_ != nullptr) munmap(map_, map_bytes_);
}

size_t interleave_bytes(const ModelWeights& w) {
  if (kernels::active_simd_level() != kernels::SimdLevel::Avx512) return 0;
  size_t total = 0;
  for (const auto& g : groups_of(const_cast<ModelWeights&>(w))) total += group_bytes(g);
  return total;
}

std::unique_ptr<WeightArena> interleave_weights(ModelWeights& w, kernels::ThreadPool* pool) {
  if (kernels::active_simd_level() != kernels::SimdLevel::Avx512) return nullptr;
  const auto groups = groups_of(w);
  size_t total = 0;
  for (const auto& g : groups) total += group_bytes(g);
  if (total == 0) return nullptr;
  auto arena = std::make_unique<WeightArena>(total);
  size_t at = 0;
  std::vector<std::pair<const uint8_t*, size_t>> released;
  for (const auto& g : groups) {
    const bool stack = stackable(g);
    const size_t start = at;
    int64_t rows = 0;
    for (auto* m : g.parts) {
      if (!kernels::interleavable(*m)) continue;
      const kernels::MatrixView plain = *m;
      *m = kernels::interleave_rows(plain, arena->data() + at, pool);
      at += placed_bytes(plain, stack);
      rows += plain.rows;
      // The embedding table stays in use (get_row) when the output projection is tied to it.
      if (plain.data != w.token_embd.data) {
        release_pages(plain.data, plain.row_stride * plain.rows);
        released.emplace_back(static_cast<const uint8_t*>(plain.data),
                              plain.row_stride * plain.rows);
      }
    }
    if (stack) {
      *g.stacked = *g.parts[0];
      g.stacked->data = arena->data() + start;
      g.stacked->rows = rows;
    }
    at = round_up(at, kAlign);
  }
  release_ranges(released);
  return arena;
}

}  // namespace baton::model
