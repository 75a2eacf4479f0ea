#include "grammar/utf8_ranges.h"

#include <algorithm>

#include "util/utf8.h"

namespace baton::grammar {
namespace {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;

// lo..hi share one encoded length. Splits until every byte position of the range is an
// independent byte range (the continuation bytes of lo are all 0x80 and of hi all 0xBF, except
// where the leading bytes agree).
void split_same_length(uint32_t lo, uint32_t hi, std::vector<ByteSequence>& out) {
  const int n = util::utf8_length(lo);
  for (int i = 1; i < n; ++i) {
    const uint32_t m = (1u << (6 * i)) - 1;
    if ((lo & ~m) != (hi & ~m)) {
      if ((lo & m) != 0) {
        split_same_length(lo, lo | m, out);
        split_same_length((lo | m) + 1, hi, out);
        return;
      }
      if ((hi & m) != m) {
        split_same_length(lo, (hi & ~m) - 1, out);
        split_same_length(hi & ~m, hi, out);
        return;
      }
    }
  }
  uint8_t a[4], b[4];
  util::encode_utf8(lo, a);
  util::encode_utf8(hi, b);
  ByteSequence seq;
  for (int i = 0; i < n; ++i) seq.push_back({a[i], b[i]});
  out.push_back(std::move(seq));
}

}  // namespace

std::vector<std::pair<uint32_t, uint32_t>> normalize_ranges(
    std::vector<std::pair<uint32_t, uint32_t>> ranges) {
  for (auto& [lo, hi] : ranges) {
    if (lo > hi) std::swap(lo, hi);
    hi = std::min(hi, kMaxCodePoint);
  }
  std::erase_if(ranges, [](const auto& r) { return r.first > kMaxCodePoint; });
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<uint32_t, uint32_t>> merged;
  for (const auto& r : ranges) {
    if (!merged.empty() && r.first <= merged.back().second + 1) {
      merged.back().second = std::max(merged.back().second, r.second);
    } else {
      merged.push_back(r);
    }
  }
  return merged;
}

std::vector<std::pair<uint32_t, uint32_t>> complement_ranges(
    const std::vector<std::pair<uint32_t, uint32_t>>& ranges) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  uint32_t next = 0;
  for (const auto& [lo, hi] : normalize_ranges(ranges)) {
    if (lo > next) out.emplace_back(next, lo - 1);
    next = hi + 1;
  }
  if (next <= kMaxCodePoint) out.emplace_back(next, kMaxCodePoint);
  return out;
}

std::vector<ByteSequence> utf8_sequences(std::vector<std::pair<uint32_t, uint32_t>> ranges) {
  // Cut out the surrogates, then cut at the encoded-length boundaries.
  std::vector<std::pair<uint32_t, uint32_t>> pieces;
  for (const auto& [lo, hi] : normalize_ranges(std::move(ranges))) {
    if (hi < 0xD800 || lo > 0xDFFF) {
      pieces.emplace_back(lo, hi);
    } else {
      if (lo < 0xD800) pieces.emplace_back(lo, 0xD7FF);
      if (hi > 0xDFFF) pieces.emplace_back(0xE000, hi);
    }
  }
  std::vector<ByteSequence> out;
  constexpr uint32_t kBounds[] = {0x7F, 0x7FF, 0xFFFF, kMaxCodePoint};
  for (auto [lo, hi] : pieces) {
    for (uint32_t bound : kBounds) {
      if (lo > hi) break;
      if (lo > bound) continue;
      const uint32_t end = std::min(hi, bound);
      split_same_length(lo, end, out);
      lo = end + 1;
    }
  }
  return out;
}

}  // namespace baton::grammar
