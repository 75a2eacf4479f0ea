#pragma once
// Level helpers both block families share (quant_block32_*, quant_superblock_*): 4-bit levels
// packed two to a byte, the IQ4 value table's nearest entry and block scale, the integer level
// function of search_scale, and a loop over a row's blocks. Internal to the kernels module.
#include <cstdint>

#include "kernels/blocks.h"
#include "kernels/quantize_search.h"

namespace baton::kernels {

// Nearest integer level in lo..hi, as a float (the level function of search_scale).
struct IntLevel {
  int lo, hi;
  float operator()(float v) const { return float(round_clamp(v, lo, hi)); }
};

// 32 levels 0..15 as Q4_0 packs them: element i in the low nibble of byte i, i + 16 in the high.
inline void pack_nibbles(const uint8_t* levels, uint8_t* qs) {
  for (int i = 0; i < kQK / 2; ++i) {
    qs[i] = uint8_t((levels[i] & 0xF) | ((levels[i + kQK / 2] & 0xF) << 4));
  }
}

// Level i (0..31) of 32 packed by pack_nibbles.
inline int nibble_level(const uint8_t* qs, int i) {
  return i < 16 ? qs[i] & 0xF : qs[i - 16] >> 4;
}

// Index of the kIQ4NLValues entry nearest to v: the largest i whose midpoint with entry i - 1
// lies below v (the table is sorted). NaN gives 0.
inline int iq4_nearest(float v) {
  int i = 0;
  for (int step = 8; step > 0; step /= 2) {
    const int k = i + step;
    if (k < 16 && v > 0.5f * float(kIQ4NLValues[k - 1] + kIQ4NLValues[k])) i = k;
  }
  return i;
}

// The scale of 32 elements coded by the IQ4 table. The table runs -127..113: the block's signed
// extreme maps to about either end.
inline float iq4_scale(const float* x) {
  return search_scale(x, kQK, -127.f, 113.f,
                      [](float v) { return float(kIQ4NLValues[iq4_nearest(v)]); });
}

// fn(block) for each of the n / block_elems blocks of type Block at src, in order.
template <class Block, class Fn>
void for_blocks(const void* src, int64_t n, int64_t block_elems, Fn fn) {
  const auto* blk = static_cast<const Block*>(src);
  for (int64_t i = 0; i < n / block_elems; ++i) fn(blk[i]);
}

}  // namespace baton::kernels
