#pragma once
// Bounds-checked little-endian reads over an untrusted byte buffer. Every read checks the
// remaining length first, so a truncated or hostile file can only produce a GgufError.
#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "gguf/gguf_file.h"

namespace baton::gguf {

// Makes untrusted text safe for a one-line message: escapes control bytes, truncates.
std::string printable(std::string_view s, size_t max_len = 64);

class Cursor {
 public:
  Cursor(const uint8_t* data, size_t size, std::string name)
      : data_(data), size_(size), name_(std::move(name)) {}

  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }
  const std::string& name() const { return name_; }

  [[noreturn]] void fail(std::string_view field, std::string_view expected) const {
    throw GgufError(fmt::format("{}: {}: expected {}", name_, field, expected));
  }

  template <typename T>
  T read(std::string_view field) {
    if (remaining() < sizeof(T)) {
      fail(field, fmt::format("{} more bytes at offset {} but the file ends at {} (truncated?)",
                              sizeof(T), pos_, size_));
    }
    T v;
    std::memcpy(&v, data_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  // A GGUF string: u64 length then bytes (no terminator).
  std::string read_string(std::string_view field, uint64_t max_len) {
    uint64_t len = read<uint64_t>(field);
    if (len > max_len)
      fail(field, fmt::format("a string of at most {} bytes, got {}", max_len, len));
    if (len > remaining()) {
      fail(field, fmt::format("{} string bytes at offset {} but only {} remain (truncated?)", len,
                              pos_, remaining()));
    }
    std::string s(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(len));
    pos_ += static_cast<size_t>(len);
    return s;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  std::string name_;
};

}  // namespace baton::gguf
