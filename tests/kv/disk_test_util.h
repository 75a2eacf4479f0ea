#pragma once
// Helpers of the disk tier tests: a scratch directory and blocks whose data is a function of
// their hash, so any byte served from the wrong place or torn by a crash is detected.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kv/disk_store.h"

namespace baton::kv::testing {

class ScratchDir {
 public:
  // in_memory: under /dev/shm when it has room, where an fsync costs nothing; for tests that
  // write thousands of segments to check something other than the disk itself.
  explicit ScratchDir(bool in_memory = false) {
    std::filesystem::path base = std::filesystem::temp_directory_path();
    std::error_code ec;
    const std::filesystem::path shm("/dev/shm");
    if (in_memory && std::filesystem::is_directory(shm, ec) &&
        std::filesystem::space(shm, ec).available >= (32u << 20) && !ec) {
      base = shm;
    }
    for (const auto& dir : {base, std::filesystem::temp_directory_path()}) {
      std::string tmpl = (dir / "baton-kvdisk-XXXXXX").string();
      if (::mkdtemp(tmpl.data())) {
        path_ = tmpl;
        break;
      }
    }
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline DiskLayout test_layout(uint64_t block_bytes = 256, uint32_t block_size = 4) {
  return {0x5EED, block_size, block_bytes, "test layout"};
}

inline DiskStoreOptions options(const std::string& dir, uint64_t budget = 1 << 20,
                                DiskLayout layout = test_layout()) {
  return {dir, budget, std::move(layout)};
}

// A chain of n blocks starting at `first_token`, named as the block pool names them.
inline std::vector<DiskBlock> chain(const DiskLayout& l, int n, int32_t first_token,
                                    uint64_t parent = 0x5EED) {
  std::vector<DiskBlock> out;
  for (int i = 0; i < n; ++i) {
    DiskBlock b;
    b.parent = parent;
    for (uint32_t t = 0; t < l.block_size; ++t) {
      b.tokens.push_back(first_token + i * static_cast<int32_t>(l.block_size) +
                         static_cast<int32_t>(t));
    }
    b.hash = parent * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(b.tokens[0]) + 1;
    parent = b.hash;
    out.push_back(std::move(b));
  }
  return out;
}

inline std::vector<uint8_t> data_for(uint64_t hash, uint64_t n) {
  std::vector<uint8_t> d(n);
  uint64_t x = hash;
  for (auto& v : d) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<uint8_t>(x >> 56);
  }
  return d;
}

// Saves `blocks` with data_for(hash) as their data.
inline bool save_chain(DiskStore& s, const std::vector<DiskBlock>& blocks) {
  std::vector<std::vector<uint8_t>> data;
  std::vector<const uint8_t*> ptrs;
  for (const auto& b : blocks) data.push_back(data_for(b.hash, s.options().layout.block_bytes));
  for (const auto& d : data) ptrs.push_back(d.data());
  return s.save(blocks, ptrs);
}

// Loads `blocks` and returns how many leading ones came back with exactly data_for(hash).
inline size_t load_chain(DiskStore& s, const std::vector<DiskBlock>& blocks) {
  const uint64_t bb = s.options().layout.block_bytes;
  std::vector<std::vector<uint8_t>> dst(blocks.size(), std::vector<uint8_t>(bb));
  std::vector<uint8_t*> ptrs;
  for (auto& d : dst) ptrs.push_back(d.data());
  const size_t n = s.load(blocks, ptrs);
  for (size_t i = 0; i < n; ++i) {
    if (dst[i] != data_for(blocks[i].hash, bb)) return i;
  }
  return n;
}

}  // namespace baton::kv::testing
