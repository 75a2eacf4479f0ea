#pragma once
// Writes standard GGUF v3 files (little-endian, alignment 32 unless general.alignment is set).
#include <cstdint>
#include <cstdio>
#include <functional>
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
  // Streaming form: fill(dst, n_bytes) produces the tensor's bytes while write() runs, so a
  // large model never has to sit in memory whole (synth of a 1 GB model holds one tensor).
  using TensorFill = std::function<void(uint8_t* dst, size_t n_bytes)>;
  void add_tensor(const std::string& name, TensorType type, std::vector<uint64_t> dims,
                  TensorFill fill);
  // Any metadata value, e.g. one read from another file.
  void set_value(const std::string& key, MetaValue v) { put(key, std::move(v)); }
  // The whole file as bytes (tests, fuzz corpus); streaming tensors are generated into it.
  std::vector<uint8_t> serialize() const;
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
    TensorFill fill;  // when set, data is empty and fill produces the bytes at write time
    uint64_t n_bytes = 0;
  };
  void write_to(std::FILE* out, const std::string& path) const;
  void put(const std::string& key, MetaValue v);
  std::vector<Entry> kv_;
  std::vector<Tensor> tensors_;
};

}  // namespace baton::gguf
