#pragma once
// UTF-8 encoding of one code point: the one encoder of the project (the grammar's literals and
// byte ranges, JSON escapes in tool-call arguments, the tokenizer's byte mapping, the chat
// templates' private-use markers all write through it).
#include <cstdint>
#include <string>

namespace baton::util {

// Bytes UTF-8 takes for code point cp (at most 0x10FFFF).
constexpr int utf8_length(uint32_t cp) {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

// Writes cp's utf8_length(cp) bytes to out and returns their count.
inline int encode_utf8(uint32_t cp, uint8_t out[4]) {
  const int n = utf8_length(cp);
  if (n == 1) {
    out[0] = static_cast<uint8_t>(cp);
    return 1;
  }
  static constexpr uint8_t kLead[5] = {0, 0, 0xC0, 0xE0, 0xF0};
  for (int i = n - 1; i > 0; --i) {
    out[i] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
    cp >>= 6;
  }
  out[0] = static_cast<uint8_t>(kLead[n] | cp);
  return n;
}

inline void append_utf8(std::string& out, uint32_t cp) {
  uint8_t b[4];
  const int n = encode_utf8(cp, b);
  out.append(reinterpret_cast<const char*>(b), static_cast<size_t>(n));
}

}  // namespace baton::util
