#include "util/utf8.h"

#include <array>

#include "tokenizer/utf8.h"

namespace baton::tokenizer::utf8 {

Scan scan(std::string_view s, size_t i) {
  const auto c = static_cast<uint8_t>(s[i]);
  if (c < 0x80) return {Status::Complete, 1};
  size_t need;
  uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    need = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return {Status::Invalid, 1};
  }
  size_t k = 1;
  for (; k < need; ++k) {
    if (i + k >= s.size()) return {Status::Truncated, k};
    const auto b = static_cast<uint8_t>(s[i + k]);
    const uint8_t l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (b < l || b > h) return {Status::Invalid, k};
  }
  return {Status::Complete, need};
}

size_t valid_prefix(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    auto r = scan(s, i);
    if (r.status != Status::Complete) break;
    i += r.len;
  }
  return i;
}

uint32_t decode_cpt(std::string_view s, size_t i, size_t* len) {
  auto r = scan(s, i);
  if (r.status != Status::Complete) {
    *len = 1;
    return 0xFFFD;
  }
  *len = r.len;
  const auto b = [&](size_t k) { return static_cast<uint32_t>(static_cast<uint8_t>(s[i + k])); };
  switch (r.len) {
    case 1:
      return b(0);
    case 2:
      return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3:
      return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    default:
      return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
}

namespace {

// Printable Latin-1 bytes stand for themselves; the rest are shifted to 256 + n so that every
// byte has a visible, non-space character (the GPT-2 convention every byte-level BPE uses).
struct ByteTables {
  std::array<std::string, 256> to_unicode;
  std::array<int16_t, 512> from_unicode;
  ByteTables() {
    from_unicode.fill(-1);
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool keep = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
      const uint32_t cpt = keep ? static_cast<uint32_t>(b) : next++;
      util::append_utf8(to_unicode[b], cpt);
      from_unicode[cpt] = static_cast<int16_t>(b);
    }
  }
};

const ByteTables& tables() {
  static const ByteTables t;
  return t;
}

}  // namespace

std::string_view byte_to_unicode(uint8_t b) {
  return tables().to_unicode[b];
}

int unicode_to_byte(uint32_t cpt) {
  return cpt < 512 ? tables().from_unicode[cpt] : -1;
}

}  // namespace baton::tokenizer::utf8
