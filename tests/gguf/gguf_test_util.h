#pragma once
// Helpers for tests that build small GGUF files in memory and patch their bytes.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"

namespace baton::gguf::test {

// A small valid file: 3 kv (architecture, a u32, a string array) and 3 tensors
// ("a.weight" f32 [8,2], "b.weight" q8_0 [32,1], "c.weight" f16 [4]).
inline GgufWriter small_writer() {
  GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.set_u32("llama.block_count", 1);
  w.set_strings("tokenizer.ggml.tokens", {"a", "b", "c"});
  std::vector<uint8_t> a(8 * 2 * 4), b(34), c(8);
  for (size_t k = 0; k < a.size(); ++k) a[k] = static_cast<uint8_t>(k);
  for (size_t k = 0; k < b.size(); ++k) b[k] = static_cast<uint8_t>(100 + k);
  for (size_t k = 0; k < c.size(); ++k) c[k] = static_cast<uint8_t>(200 + k);
  w.add_tensor("a.weight", TensorType::F32, {8, 2}, a);
  w.add_tensor("b.weight", TensorType::Q8_0, {32, 1}, b);
  w.add_tensor("c.weight", TensorType::F16, {4}, c);
  return w;
}

inline std::vector<uint8_t> small_file() {
  return small_writer().serialize();
}

// Offset of the first occurrence of needle; fails the test when absent.
inline size_t find_bytes(const std::vector<uint8_t>& hay, std::string_view needle) {
  auto it = std::search(hay.begin(), hay.end(), needle.begin(), needle.end());
  EXPECT_NE(it, hay.end()) << "pattern not found: " << needle;
  return static_cast<size_t>(it - hay.begin());
}

template <typename T>
void poke(std::vector<uint8_t>& bytes, size_t at, T v) {
  ASSERT_LE(at + sizeof(T), bytes.size());
  std::memcpy(bytes.data() + at, &v, sizeof(T));
}

// Where tensor `name`'s record fields start, given its n_dims.
struct TensorRecord {
  size_t n_dims, dims, type, offset;
};
inline TensorRecord tensor_record(const std::vector<uint8_t>& bytes, std::string_view name,
                                  uint32_t n_dims) {
  size_t p = find_bytes(bytes, name) + name.size();
  return {p, p + 4, p + 4 + 8 * n_dims, p + 4 + 8 * n_dims + 4};
}

// The error message from parsing bytes, or "" when it parsed.
inline std::string parse_error(const std::vector<uint8_t>& bytes) {
  try {
    GgufFile::from_memory(bytes.data(), bytes.size(), "broken.gguf");
  } catch (const GgufError& e) {
    return e.what();
  }
  return "";
}

}  // namespace baton::gguf::test
