#pragma once
// Code-point ranges → the UTF-8 byte-range sequences that spell exactly those code points, so
// that a character class of the grammar becomes alternatives of byte classes.
#include <cstdint>
#include <utility>
#include <vector>

namespace baton::grammar {

struct ByteRange {
  uint8_t lo = 0, hi = 0;
};
using ByteSequence = std::vector<ByteRange>;  // one byte range per byte of the character

// ranges: inclusive, any order, may overlap; surrogates (D800-DFFF) are never produced.
std::vector<ByteSequence> utf8_sequences(std::vector<std::pair<uint32_t, uint32_t>> ranges);

// Sorted, merged, complement within 0..10FFFF (for [^...]).
std::vector<std::pair<uint32_t, uint32_t>> normalize_ranges(
    std::vector<std::pair<uint32_t, uint32_t>> ranges);
std::vector<std::pair<uint32_t, uint32_t>> complement_ranges(
    const std::vector<std::pair<uint32_t, uint32_t>>& ranges);

}  // namespace baton::grammar
