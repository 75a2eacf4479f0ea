#pragma once
// Read-only view of a GGUF v2/v3 file over mmap. open() validates the whole header and tensor
// table before returning, so every accessor below is safe on any file that opened.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gguf/tensor_type.h"

namespace baton::gguf {

// One-line message naming the file, the field and what was expected.
class GgufError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// clang-format off
enum class ValueType : uint32_t {
  UINT8 = 0, INT8 = 1, UINT16 = 2, INT16 = 3, UINT32 = 4, INT32 = 5, FLOAT32 = 6,
  BOOL = 7, STRING = 8, ARRAY = 9, UINT64 = 10, INT64 = 11, FLOAT64 = 12,
};
// clang-format on
std::string_view value_type_name(ValueType t);
bool is_integer_type(ValueType t);  // any signed or unsigned integer width

// A metadata value. Scalars live in one of u/i/f/b/str by type; arrays keep their element type
// in array_type and their elements in the typed vector that fits (ints of any width in ints,
// unsigned widths as non-negative int64 unless above INT64_MAX (then in uints), floats in
// floats, bools in ints, strings in strings, nested arrays in nested).
struct MetaValue {
  ValueType type = ValueType::UINT8;
  uint64_t u = 0;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string str;
  ValueType array_type = ValueType::UINT8;
  std::vector<int64_t> ints;
  std::vector<uint64_t> uints;
  std::vector<double> floats;
  std::vector<std::string> strings;
  std::vector<MetaValue> nested;
  size_t array_size() const;
  std::string to_display(size_t max_items = 8) const;  // for `baton gguf info`
};

struct TensorInfo {
  std::string name;
  TensorType type;
  std::vector<uint64_t> dims;  // ne0 first, as GGUF stores them: dims[0] is the row length
  uint64_t offset = 0;         // from the start of the tensor data section
  uint64_t n_elements = 0;
  uint64_t n_bytes = 0;
  uint64_t rows() const { return dims.empty() ? 0 : n_elements / dims[0]; }
};

class GgufFile {
 public:
  // Throws GgufError on any violation (bad magic, version 1, counts, lengths, types, offsets,
  // alignment, tensors outside the file ...).
  static std::unique_ptr<GgufFile> open(const std::string& path);
  // Same validation over bytes already in memory (the fuzz target and tests use it).
  static std::unique_ptr<GgufFile> from_memory(const uint8_t* data, size_t size,
                                               const std::string& name = "<memory>");
  ~GgufFile();
  GgufFile(const GgufFile&) = delete;
  GgufFile& operator=(const GgufFile&) = delete;

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t file_size() const { return size_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }

  // Metadata in file order.
  const std::vector<std::pair<std::string, MetaValue>>& metadata() const { return kv_; }
  const MetaValue* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }

  // Typed getters. The *_or forms return the fallback when the key is absent; all of them throw
  // GgufError naming the key when it is present with an incompatible type.
  std::string get_string(std::string_view key) const;
  std::string get_string_or(std::string_view key, std::string fallback) const;
  int64_t get_int(std::string_view key) const;  // any integer type
  int64_t get_int_or(std::string_view key, int64_t fallback) const;
  double get_float(std::string_view key) const;  // float or integer types
  double get_float_or(std::string_view key, double fallback) const;
  bool get_bool_or(std::string_view key, bool fallback) const;
  // Array getters; throw when absent or of another element type. Empty vector if absent for *_or.
  const std::vector<std::string>& get_strings(std::string_view key) const;
  const std::vector<double>& get_floats(std::string_view key) const;
  const std::vector<int64_t>& get_ints(std::string_view key) const;

  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  const TensorInfo* find_tensor(std::string_view name) const;
  // Raw bytes of a tensor (inside the mapping; valid while this object lives).
  const uint8_t* tensor_data(const TensorInfo& t) const { return base_ + data_offset_ + t.offset; }

 private:
  GgufFile() = default;
  friend class GgufParser;
  std::string path_;
  uint32_t version_ = 0;
  const uint8_t* base_ = nullptr;
  uint64_t size_ = 0;
  void* mapping_ = nullptr;  // munmap on destruction when non-null
  void* owned_ = nullptr;    // from_memory's private copy, freed on destruction
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, MetaValue>> kv_;
  std::map<std::string, size_t, std::less<>> kv_index_;
  std::vector<TensorInfo> tensors_;
  std::map<std::string, size_t, std::less<>> tensor_index_;
};

}  // namespace baton::gguf
