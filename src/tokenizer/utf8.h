#pragma once
// UTF-8 scanning and GPT-2's byte <-> unicode character mapping, shared by the encoders,
// the decoder and the streaming decoder.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace baton::tokenizer::utf8 {

// Length a lead byte announces, llama.cpp style: continuation and invalid bytes count as 1.
inline size_t lead_len(uint8_t c) {
  static constexpr uint8_t kLen[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLen[c >> 4];
}

enum class Status { Complete, Truncated, Invalid };
struct Scan {
  Status status;
  size_t len;  // Complete: the sequence; Truncated: bytes present; Invalid: maximal subpart
};
// Classifies the sequence starting at s[i] (Unicode's well-formed table, no overlongs or
// surrogates).
Scan scan(std::string_view s, size_t i);

// Length of the longest prefix of s made of complete, valid sequences.
size_t valid_prefix(std::string_view s);

inline constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// GPT-2 bytes_to_unicode: each byte as the UTF-8 of the character byte-level BPE writes.
std::string_view byte_to_unicode(uint8_t b);
// Inverse for one character; -1 when the character is not in the mapping.
int unicode_to_byte(uint32_t cpt);
// Decodes one code point at s[i] (valid UTF-8 expected; invalid bytes give 0xFFFD, len 1).
uint32_t decode_cpt(std::string_view s, size_t i, size_t* len);

}  // namespace baton::tokenizer::utf8
