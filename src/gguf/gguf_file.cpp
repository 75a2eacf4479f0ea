#include "gguf/gguf_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "gguf/gguf_parser.h"
#include "util/posix_file.h"

namespace baton::gguf {
namespace {

[[noreturn]] void fail_key(const GgufFile& f, std::string_view key, std::string_view expected,
                           const MetaValue& v) {
  throw GgufError(fmt::format("{}: metadata '{}': expected {}, got {}", f.path(), key, expected,
                              value_type_name(v.type)));
}

}  // namespace

std::unique_ptr<GgufFile> GgufFile::open(const std::string& path) {
  util::Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));  // closed on every path out
  if (fd.fd < 0) {
    throw GgufError(
        fmt::format("{}: cannot open: {} (check the path)", path, std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(fd.fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    throw GgufError(fmt::format("{}: expected a regular file", path));
  }
  if (st.st_size == 0)
    throw GgufError(fmt::format("{}: file is empty, expected a GGUF file", path));
  void* m = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd.fd, 0);
  if (m == MAP_FAILED) {
    throw GgufError(fmt::format("{}: cannot mmap: {}", path, std::strerror(errno)));
  }
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->path_ = path;
  f->mapping_ = m;
  f->base_ = static_cast<const uint8_t*>(m);
  f->size_ = static_cast<uint64_t>(st.st_size);
  GgufParser::parse(*f);
  return f;
}

std::unique_ptr<GgufFile> GgufFile::from_memory(const uint8_t* data, size_t size,
                                                const std::string& name) {
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->path_ = name;
  // A private, 64-byte aligned copy: the caller's buffer may go away, and kernels may rely on
  // tensor data being as aligned as it is in a mapping.
  size_t cap = (size + 63) / 64 * 64;
  if (cap == 0) cap = 64;
  void* copy = std::aligned_alloc(64, cap);
  if (copy == nullptr) throw GgufError(fmt::format("{}: out of memory for {} bytes", name, size));
  if (size > 0) std::memcpy(copy, data, size);
  f->owned_ = copy;
  f->base_ = static_cast<const uint8_t*>(copy);
  f->size_ = size;
  GgufParser::parse(*f);
  return f;
}

GgufFile::~GgufFile() {
  if (mapping_ != nullptr) ::munmap(mapping_, static_cast<size_t>(size_));
  std::free(owned_);
}

const MetaValue* GgufFile::find(std::string_view key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kv_[it->second].second;
}

const TensorInfo* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::string GgufFile::get_string(std::string_view key) const {
  const MetaValue* v = find(key);
  if (v == nullptr)
    throw GgufError(
        fmt::format("{}: metadata '{}': expected a string, key is missing", path_, key));
  if (v->type != ValueType::STRING) fail_key(*this, key, "a string", *v);
  return v->str;
}

std::string GgufFile::get_string_or(std::string_view key, std::string fallback) const {
  return has(key) ? get_string(key) : fallback;
}

int64_t GgufFile::get_int(std::string_view key) const {
  const MetaValue* v = find(key);
  if (v == nullptr)
    throw GgufError(
        fmt::format("{}: metadata '{}': expected an integer, key is missing", path_, key));
  if (!is_integer_type(v->type)) fail_key(*this, key, "an integer", *v);
  if (v->type == ValueType::UINT64 &&
      v->u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    fail_key(*this, key, "an integer below 2^63", *v);
  }
  return v->i;
}

int64_t GgufFile::get_int_or(std::string_view key, int64_t fallback) const {
  return has(key) ? get_int(key) : fallback;
}

double GgufFile::get_float(std::string_view key) const {
  const MetaValue* v = find(key);
  if (v == nullptr)
    throw GgufError(
        fmt::format("{}: metadata '{}': expected a number, key is missing", path_, key));
  if (v->type == ValueType::FLOAT32 || v->type == ValueType::FLOAT64) return v->f;
  if (v->type == ValueType::UINT64) return static_cast<double>(v->u);
  if (is_integer_type(v->type)) return static_cast<double>(v->i);
  fail_key(*this, key, "a number", *v);
}

double GgufFile::get_float_or(std::string_view key, double fallback) const {
  return has(key) ? get_float(key) : fallback;
}

bool GgufFile::get_bool_or(std::string_view key, bool fallback) const {
  const MetaValue* v = find(key);
  if (v == nullptr) return fallback;
  if (v->type != ValueType::BOOL) fail_key(*this, key, "a bool", *v);
  return v->b;
}

const std::vector<std::string>& GgufFile::get_strings(std::string_view key) const {
  const MetaValue* v = find(key);
  if (v == nullptr)
    throw GgufError(
        fmt::format("{}: metadata '{}': expected an array of strings, key is missing", path_, key));
  if (v->type != ValueType::ARRAY || v->array_type != ValueType::STRING) {
    fail_key(*this, key, "an array of strings", *v);
  }
  return v->strings;
}

const std::vector<double>& GgufFile::get_floats(std::string_view key) const {
  const MetaValue* v = find(key);
  if (v == nullptr)
    throw GgufError(
        fmt::format("{}: metadata '{}': expected an array of floats, key is missing", path_, key));
  if (v->type != ValueType::ARRAY ||
      (v->array_type != ValueType::FLOAT32 && v->array_type != ValueType::FLOAT64)) {
    fail_key(*this, key, "an array of floats", *v);
  }
  return v->floats;
}

const std::vector<int64_t>& GgufFile::get_ints(std::string_view key) const {
  const MetaValue* v = find(key);
  if (v == nullptr)
    throw GgufError(fmt::format("{}: metadata '{}': expected an array of integers, key is missing",
                                path_, key));
  bool ok = v->type == ValueType::ARRAY &&
            (is_integer_type(v->array_type) || v->array_type == ValueType::BOOL) &&
            v->ints.size() == v->array_size();
  if (!ok) fail_key(*this, key, "an array of integers (below 2^63)", *v);
  return v->ints;
}

}  // namespace baton::gguf
