#pragma once
// Writes standard GGUF v3 files (little-endian, alignment 32 unless general.alignment is set).
#include <cstdint>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"

namespace baton::gguf {

class GgufWriter {
 public:
  void set_string(const std::string& key, const std::string& v);
  void set_u32(const std::string& key, uint32_t v);
  void set_i32(const std::string& key, int32_t v);
  void set_u64(const std::string& key, uint64_t v);
  void set_f32(const std::string& key, float v);
  void set_bool(const std::string& key, bool v);
  void set_strings(const std::string& key, const std::vector<std::string>& v);
  void set_f32s(const std::string& key, const std::vector<float>& v);
  void set_i32s(const std::string& key, const std::vector<int32_t>& v);
  // Copies every metadata key of another file whose name starts with prefix (e.g. "tokenizer.").
  void copy_metadata(const GgufFile& from, const std::string& prefix);
  // dims ne0 first; data.size() must equal the type's row_bytes × rows.
  void add_tensor(const std::string& name, TensorType type, std::vector<uint64_t> dims,
                  std::vector<uint8_t> data);
  // Writes atomically (temp file + rename). Throws GgufError with the path on I/O failure.
  void write(const std::string& path) const;

 private:
  struct Entry {
    std::string key;
    MetaValue value;
  };
  struct Tensor {
    std::string name;
    TensorType type;
    std::vector<uint64_t> dims;
    std::vector<uint8_t> data;
  };
  void put(const std::string& key, MetaValue v);
  std::vector<Entry> kv_;
  std::vector<Tensor> tensors_;
};

}  // namespace baton::gguf
