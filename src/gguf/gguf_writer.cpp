#include "gguf/gguf_writer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace baton::gguf {
namespace {

// Buffered little-endian output; remembers the first I/O error instead of checking each call.
class Out {
 public:
  Out(std::FILE* f, const std::string& path) : f_(f), path_(path) {}
  void bytes(const void* p, size_t n) {
    if (n > 0 && std::fwrite(p, 1, n, f_) != n) fail();
    pos_ += n;
  }
  template <typename T>
  void pod(T v) {
    bytes(&v, sizeof(T));
  }
  void str(const std::string& s) {
    pod<uint64_t>(s.size());
    bytes(s.data(), s.size());
  }
  void pad_to(uint64_t alignment) {
    static const uint8_t zeros[256] = {};
    uint64_t n = (alignment - pos_ % alignment) % alignment;
    while (n > 0) {
      size_t chunk = static_cast<size_t>(std::min<uint64_t>(n, sizeof(zeros)));
      bytes(zeros, chunk);
      n -= chunk;
    }
  }
  uint64_t pos() const { return pos_; }
  [[noreturn]] void fail() const {
    throw GgufError(fmt::format("{}: write failed: {} (check free space and permissions)", path_,
                                std::strerror(errno)));
  }

 private:
  std::FILE* f_;
  const std::string& path_;
  uint64_t pos_ = 0;
};

// Element k of an array (in_array) or the scalar itself, in the width its type says.
void write_scalar(Out& o, ValueType t, const MetaValue& v, size_t k, bool in_array) {
  const bool is_float = t == ValueType::FLOAT32 || t == ValueType::FLOAT64;
  const bool is_int = !is_float && t != ValueType::STRING && t != ValueType::ARRAY;
  int64_t i = v.i;
  uint64_t u = v.u;
  double f = v.f;
  if (in_array && is_int && t == ValueType::UINT64) u = v.uints[k];
  if (in_array && is_int && t != ValueType::UINT64) u = static_cast<uint64_t>(i = v.ints[k]);
  if (in_array && is_float) f = v.floats[k];
  switch (t) {
    case ValueType::UINT8:
      o.pod<uint8_t>(static_cast<uint8_t>(u));
      break;
    case ValueType::INT8:
      o.pod<int8_t>(static_cast<int8_t>(i));
      break;
    case ValueType::UINT16:
      o.pod<uint16_t>(static_cast<uint16_t>(u));
      break;
    case ValueType::INT16:
      o.pod<int16_t>(static_cast<int16_t>(i));
      break;
    case ValueType::UINT32:
      o.pod<uint32_t>(static_cast<uint32_t>(u));
      break;
    case ValueType::INT32:
      o.pod<int32_t>(static_cast<int32_t>(i));
      break;
    case ValueType::UINT64:
      o.pod<uint64_t>(u);
      break;
    case ValueType::INT64:
      o.pod<int64_t>(i);
      break;
    case ValueType::FLOAT32:
      o.pod<float>(static_cast<float>(f));
      break;
    case ValueType::FLOAT64:
      o.pod<double>(f);
      break;
    case ValueType::BOOL:
      o.pod<uint8_t>(in_array ? (i != 0) : v.b);
      break;
    case ValueType::STRING:
      o.str(in_array ? v.strings[k] : v.str);
      break;
    case ValueType::ARRAY:
      break;  // handled by write_value
  }
}

// The value's body as GGUF stores it after its type tag.
void write_value(Out& o, const MetaValue& v) {
  if (v.type != ValueType::ARRAY) {
    write_scalar(o, v.type, v, 0, false);
    return;
  }
  o.pod<uint32_t>(static_cast<uint32_t>(v.array_type));
  size_t n = v.array_size();
  o.pod<uint64_t>(n);
  for (size_t k = 0; k < n; ++k) {
    if (v.array_type == ValueType::ARRAY) {
      write_value(o, v.nested[k]);
    } else {
      write_scalar(o, v.array_type, v, k, true);
    }
  }
}

MetaValue scalar(ValueType t) {
  MetaValue v;
  v.type = t;
  return v;
}

uint64_t checked_bytes(const std::string& name, TensorType type,
                       const std::vector<uint64_t>& dims) {
  auto tr = type_traits(static_cast<uint32_t>(type));
  if (!tr || tr->block_bytes == 0) {
    throw GgufError(fmt::format("tensor '{}': unknown type {}", name, static_cast<uint32_t>(type)));
  }
  if (name.empty() || dims.empty() || dims.size() > 4) {
    throw GgufError(fmt::format("tensor '{}': expected a non-empty name and 1..4 dims", name));
  }
  uint64_t n = 1;
  for (uint64_t d : dims) {
    if (d == 0) throw GgufError(fmt::format("tensor '{}': expected non-zero dims", name));
    n *= d;
  }
  if (dims[0] % tr->block_elems != 0) {
    throw GgufError(fmt::format("tensor '{}': dims[0] = {} is not a multiple of {} ({} block)",
                                name, dims[0], tr->block_elems, tr->name));
  }
  return n / tr->block_elems * tr->block_bytes;
}

}  // namespace

void GgufWriter::put(const std::string& key, MetaValue v) {
  for (auto& e : kv_) {
    if (e.key == key) {
      e.value = std::move(v);
      return;
    }
  }
  kv_.push_back({key, std::move(v)});
}

void GgufWriter::set_string(const std::string& key, const std::string& v) {
  MetaValue m = scalar(ValueType::STRING);
  m.str = v;
  put(key, std::move(m));
}

void GgufWriter::set_u32(const std::string& key, uint32_t v) {
  MetaValue m = scalar(ValueType::UINT32);
  m.u = v;
  m.i = v;
  put(key, std::move(m));
}

void GgufWriter::set_i32(const std::string& key, int32_t v) {
  MetaValue m = scalar(ValueType::INT32);
  m.i = v;
  m.u = v >= 0 ? static_cast<uint64_t>(v) : 0;
  put(key, std::move(m));
}

void GgufWriter::set_u64(const std::string& key, uint64_t v) {
  MetaValue m = scalar(ValueType::UINT64);
  m.u = v;
  m.i = static_cast<int64_t>(v);
  put(key, std::move(m));
}

void GgufWriter::set_f32(const std::string& key, float v) {
  MetaValue m = scalar(ValueType::FLOAT32);
  m.f = v;
  put(key, std::move(m));
}

void GgufWriter::set_bool(const std::string& key, bool v) {
  MetaValue m = scalar(ValueType::BOOL);
  m.b = v;
  m.i = v;
  m.u = v;
  put(key, std::move(m));
}

void GgufWriter::set_strings(const std::string& key, const std::vector<std::string>& v) {
  MetaValue m = scalar(ValueType::ARRAY);
  m.array_type = ValueType::STRING;
  m.strings = v;
  put(key, std::move(m));
}

void GgufWriter::set_f32s(const std::string& key, const std::vector<float>& v) {
  MetaValue m = scalar(ValueType::ARRAY);
  m.array_type = ValueType::FLOAT32;
  m.floats.assign(v.begin(), v.end());
  put(key, std::move(m));
}

void GgufWriter::set_i32s(const std::string& key, const std::vector<int32_t>& v) {
  MetaValue m = scalar(ValueType::ARRAY);
  m.array_type = ValueType::INT32;
  m.ints.assign(v.begin(), v.end());
  put(key, std::move(m));
}

void GgufWriter::copy_metadata(const GgufFile& from, const std::string& prefix) {
  for (const auto& [key, value] : from.metadata()) {
    if (key.compare(0, prefix.size(), prefix) == 0) put(key, value);
  }
}

void GgufWriter::add_tensor(const std::string& name, TensorType type, std::vector<uint64_t> dims,
                            std::vector<uint8_t> data) {
  uint64_t n_bytes = checked_bytes(name, type, dims);
  if (data.size() != n_bytes) {
    throw GgufError(fmt::format("tensor '{}': expected {} bytes of {} data, got {}", name, n_bytes,
                                type_name(type), data.size()));
  }
  tensors_.push_back({name, type, std::move(dims), std::move(data), nullptr, n_bytes});
}

void GgufWriter::add_tensor(const std::string& name, TensorType type, std::vector<uint64_t> dims,
                            TensorFill fill) {
  uint64_t n_bytes = checked_bytes(name, type, dims);
  tensors_.push_back({name, type, std::move(dims), {}, std::move(fill), n_bytes});
}

void GgufWriter::write_to(std::FILE* f, const std::string& path) const {
  uint64_t alignment = 32;
  for (const auto& e : kv_) {
    if (e.key == "general.alignment" && e.value.u > 0) alignment = e.value.u;
  }
  Out o(f, path);
  o.bytes("GGUF", 4);
  o.pod<uint32_t>(3);
  o.pod<uint64_t>(tensors_.size());
  o.pod<uint64_t>(kv_.size());
  for (const auto& e : kv_) {
    o.str(e.key);
    o.pod<uint32_t>(static_cast<uint32_t>(e.value.type));
    write_value(o, e.value);
  }
  uint64_t offset = 0;
  for (const auto& t : tensors_) {
    o.str(t.name);
    o.pod<uint32_t>(static_cast<uint32_t>(t.dims.size()));
    for (uint64_t d : t.dims) o.pod<uint64_t>(d);
    o.pod<uint32_t>(static_cast<uint32_t>(t.type));
    o.pod<uint64_t>(offset);
    offset += (t.n_bytes + alignment - 1) / alignment * alignment;
  }
  o.pad_to(alignment);
  std::vector<uint8_t> buf;
  for (const auto& t : tensors_) {
    if (t.fill) {
      buf.assign(static_cast<size_t>(t.n_bytes), 0);
      t.fill(buf.data(), buf.size());
      o.bytes(buf.data(), buf.size());
    } else {
      o.bytes(t.data.data(), t.data.size());
    }
    o.pad_to(alignment);
  }
}

std::vector<uint8_t> GgufWriter::serialize() const {
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* f = ::open_memstream(&buf, &len);
  if (f == nullptr) throw GgufError("<memory>: open_memstream failed");
  try {
    write_to(f, "<memory>");
  } catch (...) {
    std::fclose(f);
    std::free(buf);
    throw;
  }
  std::fclose(f);
  std::vector<uint8_t> out(buf, buf + len);
  std::free(buf);
  return out;
}

void GgufWriter::write(const std::string& path) const {
  std::string tmp = fmt::format("{}.tmp{}", path, static_cast<long>(::getpid()));
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    throw GgufError(fmt::format("{}: cannot create: {} (check the folder exists and is writable)",
                                tmp, std::strerror(errno)));
  }
  try {
    write_to(f, path);
    if (std::fflush(f) != 0) Out(f, path).fail();
  } catch (...) {
    std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
  if (std::fclose(f) != 0 || std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    throw GgufError(fmt::format("{}: cannot finish writing: {}", path, std::strerror(err)));
  }
}

}  // namespace baton::gguf
