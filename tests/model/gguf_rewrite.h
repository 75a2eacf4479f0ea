#pragma once
// Copies of a GGUF file with edits, for the tests of bad or unusual model files.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"

namespace baton::testing {

// Copies `from` to `to`: every metadata key but `drop` (empty: none), then `edit` adjusts the
// metadata; tensors pass through `keep` (null: all) and, when `reshape` returns true for one (an
// F32 tensor), are written with the dims it set and zero data (a tensor of the wrong size).
inline void rewrite(
    const std::string& from, const std::string& to,
    const std::function<void(gguf::GgufWriter&)>& edit,
    const std::function<bool(const gguf::TensorInfo&)>& keep = nullptr,
    const std::function<bool(const gguf::TensorInfo&, std::vector<uint64_t>&)>& reshape = nullptr,
    const std::string& drop = "") {
  auto f = gguf::GgufFile::open(from);
  gguf::GgufWriter w;
  for (const auto& [k, v] : f->metadata()) {
    if (k != drop) w.set_value(k, v);
  }
  edit(w);
  for (const auto& t : f->tensors()) {
    if (keep && !keep(t)) continue;
    std::vector<uint64_t> dims = t.dims;
    if (reshape && reshape(t, dims)) {
      uint64_t n = 1;
      for (uint64_t d : dims) n *= d;
      w.add_tensor(t.name, t.type, dims, std::vector<uint8_t>(n * 4, 0));
      continue;
    }
    const uint8_t* d = f->tensor_data(t);
    w.add_tensor(t.name, t.type, t.dims, std::vector<uint8_t>(d, d + t.n_bytes));
  }
  w.write(to);
}

}  // namespace baton::testing
