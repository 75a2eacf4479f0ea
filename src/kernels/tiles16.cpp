#include "kernels/tiles16.h"

#include <cstring>
#include <type_traits>

#include "kernels/blocks.h"

namespace baton::kernels {
namespace {

// Copies n bytes one way between the tile and a plain block (to_tile says which).
void move_bytes(bool to_tile, uint8_t* tile, uint8_t* plain, size_t n) {
  if (to_tile) {
    std::memcpy(tile, plain, n);
  } else {
    std::memcpy(plain, tile, n);
  }
}

// Moves `quads` 4-byte groups of one row between the file's bytes (consecutive) and a tile run
// (64 B apart: the row's place in consecutive quads).
void move_quads(bool to_tile, uint8_t* tile_run, uint8_t* file_run, int quads) {
  for (int q = 0; q < quads; ++q) move_bytes(to_tile, tile_run + 64 * q, file_run + 4 * q, 4);
}

// Row r of Q8_0 block b, moved between `blk` and the tile. Levels are stored + 128 (an xor of
// the sign bit), which undoes itself on the way back.
void q8_0_row(bool to_tile, uint8_t* tile, int64_t b, int r, BlockQ8_0& blk) {
  uint8_t* quants = tile + tile16_quants_at(gguf::TensorType::Q8_0, b) + 4 * r;
  for (int q = 0; q < 8; ++q) {
    uint8_t four[4];
    if (to_tile) {
      for (int k = 0; k < 4; ++k) four[k] = uint8_t(blk.qs[4 * q + k]) ^ 0x80;
      std::memcpy(quants + 64 * q, four, 4);
    } else {
      std::memcpy(four, quants + 64 * q, 4);
      for (int k = 0; k < 4; ++k) blk.qs[4 * q + k] = int8_t(four[k] ^ 0x80);
    }
  }
  uint8_t* d = tile + tile16_scales_at(gguf::TensorType::Q8_0, b) + 2 * r;
  move_bytes(to_tile, d, reinterpret_cast<uint8_t*>(&blk.d), 2);
}

// Row r of Q4_0, IQ4_NL, Q4_1 or Q5_0 block b, moved between `blk` and the tile: the quants as
// Q4_0's, Q4_1's m after the d of the pair, Q5_0's fifth bits regrouped (tiles16.h).
template <class Block>
void pair_row(bool to_tile, uint8_t* tile, int64_t b, int r, Block& blk) {
  constexpr auto kType = std::is_same_v<Block, BlockQ4_1>     ? gguf::TensorType::Q4_1
                         : std::is_same_v<Block, BlockQ5_0>   ? gguf::TensorType::Q5_0
                         : std::is_same_v<Block, BlockIQ4_NL> ? gguf::TensorType::IQ4_NL
                                                              : gguf::TensorType::Q4_0;
  uint8_t* quants = tile + tile16_quants_at(kType, b) + 4 * r;
  move_quads(to_tile, quants, blk.qs, 4);
  uint8_t* d = tile + tile16_scales_at(kType, b) + 2 * r;
  move_bytes(to_tile, d, reinterpret_cast<uint8_t*>(&blk.d), 2);
  if constexpr (kType == gguf::TensorType::Q4_1) {
    move_bytes(to_tile, tile + tile16_extra_at(kType, b) + 2 * r,
               reinterpret_cast<uint8_t*>(&blk.m), 2);
  }
  if constexpr (kType == gguf::TensorType::Q5_0) {
    uint8_t* fifth = tile + tile16_extra_at(kType, b) + 4 * r;
    uint32_t bits;
    uint8_t bytes[4] = {0, 0, 0, 0};
    if (to_tile) {
      std::memcpy(&bits, blk.qh, 4);
      for (int k = 0; k < 4; ++k) {
        for (int q = 0; q < 4; ++q) {
          bytes[k] = uint8_t(bytes[k] | ((bits >> (4 * q + k)) & 1) << q |
                             ((bits >> (16 + 4 * q + k)) & 1) << (4 + q));
        }
      }
      std::memcpy(fifth, bytes, 4);
    } else {
      std::memcpy(bytes, fifth, 4);
      bits = 0;
      for (int k = 0; k < 4; ++k) {
        for (int q = 0; q < 4; ++q) {
          bits |= uint32_t((bytes[k] >> q) & 1) << (4 * q + k);
          bits |= uint32_t((bytes[k] >> (4 + q)) & 1) << (16 + 4 * q + k);
        }
      }
      std::memcpy(blk.qh, &bits, 4);
    }
  }
}

// Row r of MXFP4 block b, moved between `blk` and the tile: the quants as Q4_0's, the exponent
// byte at the row's place in the block's 16 scale bytes.
void mxfp4_row(bool to_tile, uint8_t* tile, int64_t b, int r, BlockMXFP4& blk) {
  constexpr auto kType = gguf::TensorType::MXFP4;
  move_quads(to_tile, tile + tile16_quants_at(kType, b) + 4 * r, blk.qs, 4);
  move_bytes(to_tile, tile + tile16_scales_at(kType, b) + r, &blk.e, 1);
}

// Row r of IQ4_XS super-block s, moved between `blk` and the tile; the 6-bit block scales are
// stored unpacked, less 32.
void iq4_xs_row(bool to_tile, uint8_t* tile, int64_t s, int r, BlockIQ4_XS& blk) {
  constexpr auto kType = gguf::TensorType::IQ4_XS;
  uint8_t* quants = tile + tile16_quants_at(kType, s) + 4 * r;
  for (int j = 0; j < 8; ++j) move_quads(to_tile, quants + 256 * j, blk.qs + 16 * j, 4);
  uint8_t* scales = tile + tile16_scales_at(kType, s);
  move_bytes(to_tile, scales + 2 * r, reinterpret_cast<uint8_t*>(&blk.d), 2);
  if (to_tile) {
    for (int j = 0; j < 8; ++j) scales[32 + 16 * j + r] = uint8_t(iq4xs_scale(j, blk) - 32);
    return;
  }
  blk.scales_h = 0;
  std::memset(blk.scales_l, 0, sizeof blk.scales_l);
  for (int j = 0; j < 8; ++j) {
    const int ls = (int(int8_t(scales[32 + 16 * j + r])) + 32) & 63;
    blk.scales_l[j / 2] = uint8_t(blk.scales_l[j / 2] | (ls & 0xF) << (4 * (j % 2)));
    blk.scales_h = uint16_t(blk.scales_h | (ls >> 4) << (2 * j));
  }
}

// Row r of Q2_K super-block s, moved between `blk` and the tile.
void q2_k_row(bool to_tile, uint8_t* tile, int64_t s, int r, BlockQ2_K& blk) {
  constexpr auto kType = gguf::TensorType::Q2_K;
  uint8_t* quants = tile + tile16_quants_at(kType, s) + 4 * r;
  for (int n = 0; n < 2; ++n) move_quads(to_tile, quants + 512 * n, blk.qs + 32 * n, 8);
  uint8_t* meta = tile + tile16_scales_at(kType, s);
  move_bytes(to_tile, meta + 2 * r, reinterpret_cast<uint8_t*>(&blk.d), 2);
  move_bytes(to_tile, meta + 32 + 2 * r, reinterpret_cast<uint8_t*>(&blk.dmin), 2);
  for (int v = 0; v < 16; ++v) move_bytes(to_tile, meta + 64 + 16 * v + r, &blk.scales[v], 1);
}

// Row r of Q3_K super-block s, moved between `blk` and the tile; the 6-bit scales are stored
// unpacked, less 32.
void q3_k_row(bool to_tile, uint8_t* tile, int64_t s, int r, BlockQ3_K& blk) {
  constexpr auto kType = gguf::TensorType::Q3_K;
  uint8_t* quants = tile + tile16_quants_at(kType, s) + 4 * r;
  move_quads(to_tile, quants, blk.hmask, 8);
  for (int n = 0; n < 2; ++n) move_quads(to_tile, quants + 512 + 512 * n, blk.qs + 32 * n, 8);
  uint8_t* scales = tile + tile16_scales_at(kType, s);
  move_bytes(to_tile, scales + 2 * r, reinterpret_cast<uint8_t*>(&blk.d), 2);
  if (to_tile) {
    for (int v = 0; v < 16; ++v) scales[32 + 16 * v + r] = uint8_t(q3k_scale(v, blk.scales) - 32);
    return;
  }
  std::memset(blk.scales, 0, sizeof blk.scales);
  for (int v = 0; v < 16; ++v) {
    const int sc = (int(int8_t(scales[32 + 16 * v + r])) + 32) & 63;
    blk.scales[v % 8] = uint8_t(blk.scales[v % 8] | (sc & 0xF) << (4 * (v / 8)));
    blk.scales[8 + v % 4] = uint8_t(blk.scales[8 + v % 4] | (sc >> 4) << (2 * (v / 4)));
  }
}

// Row r of Q4_K or Q5_K super-block s, moved between `blk` and the tile (Q5_K's fifth bits
// before the nibbles).
template <class Block>
void q4_5_k_row(bool to_tile, uint8_t* tile, int64_t s, int r, Block& blk) {
  constexpr bool kQ5 = std::is_same_v<Block, BlockQ5_K>;
  constexpr auto kType = kQ5 ? gguf::TensorType::Q5_K : gguf::TensorType::Q4_K;
  uint8_t* quants = tile + tile16_quants_at(kType, s) + 4 * r;
  if constexpr (kQ5) {
    move_quads(to_tile, quants, blk.qh, 8);
    quants += 512;
  }
  for (int m = 0; m < 4; ++m) move_quads(to_tile, quants + 512 * m, blk.qs + 32 * m, 8);
  uint8_t* meta = tile + tile16_scales_at(kType, s);
  move_bytes(to_tile, meta + 2 * r, reinterpret_cast<uint8_t*>(&blk.d), 2);
  move_bytes(to_tile, meta + 32 + 2 * r, reinterpret_cast<uint8_t*>(&blk.dmin), 2);
  uint8_t* sc = meta + 64;
  uint8_t* mn = meta + 64 + 128;
  if (to_tile) {
    for (int j = 0; j < 8; ++j) q4k_scale_min(j, blk.scales, &sc[16 * j + r], &mn[16 * j + r]);
    return;
  }
  uint8_t s8[8], m8[8];
  for (int j = 0; j < 8; ++j) {
    s8[j] = sc[16 * j + r];
    m8[j] = mn[16 * j + r];
  }
  q4k_pack_scales(s8, m8, blk.scales);
}

// Row r of Q6_K super-block s, moved between `blk` and the tile.
void q6_k_row(bool to_tile, uint8_t* tile, int64_t s, int r, BlockQ6_K& blk) {
  constexpr auto kType = gguf::TensorType::Q6_K;
  uint8_t* quants = tile + tile16_quants_at(kType, s) + 4 * r;
  for (int n = 0; n < 2; ++n) {
    uint8_t* run = quants + 1536 * n;
    move_quads(to_tile, run, blk.qh + 32 * n, 8);
    for (int c = 0; c < 2; ++c) {
      move_quads(to_tile, run + 512 + 512 * c, blk.ql + 64 * n + 32 * c, 8);
    }
  }
  uint8_t* scales = tile + tile16_scales_at(kType, s);
  move_bytes(to_tile, scales + 2 * r, reinterpret_cast<uint8_t*>(&blk.d), 2);
  for (int v = 0; v < 16; ++v) {
    move_bytes(to_tile, scales + 32 + 16 * v + r, reinterpret_cast<uint8_t*>(&blk.scales[v]), 1);
  }
}

template <class Block, class Move>
void pack_rows(const uint8_t* const rows[kTile16], int64_t nb, uint8_t* out, Move move) {
  for (int64_t b = 0; b < nb; ++b) {
    for (int r = 0; r < kTile16; ++r) {
      Block blk;
      std::memcpy(&blk, rows[r] + b * int64_t(sizeof(Block)), sizeof blk);
      move(true, out, b, r, blk);
    }
  }
}

template <class Block, class Move>
void unpack_row(const uint8_t* tile, int64_t nb, int r, uint8_t* out, Move move) {
  for (int64_t b = 0; b < nb; ++b) {
    Block blk;
    move(false, const_cast<uint8_t*>(tile), b, r, blk);  // reads the tile only
    std::memcpy(out + b * int64_t(sizeof(Block)), &blk, sizeof blk);
  }
}

}  // namespace

void pack_tile16(gguf::TensorType t, const uint8_t* const rows[kTile16], int64_t nb, uint8_t* out) {
  switch (t) {
    case gguf::TensorType::Q8_0:
      return pack_rows<BlockQ8_0>(rows, nb, out, q8_0_row);
    case gguf::TensorType::Q4_0:
      return pack_rows<BlockQ4_0>(rows, nb, out, pair_row<BlockQ4_0>);
    case gguf::TensorType::IQ4_NL:
      return pack_rows<BlockIQ4_NL>(rows, nb, out, pair_row<BlockIQ4_NL>);
    case gguf::TensorType::Q4_1:
      return pack_rows<BlockQ4_1>(rows, nb, out, pair_row<BlockQ4_1>);
    case gguf::TensorType::Q5_0:
      return pack_rows<BlockQ5_0>(rows, nb, out, pair_row<BlockQ5_0>);
    case gguf::TensorType::IQ4_XS:
      return pack_rows<BlockIQ4_XS>(rows, nb, out, iq4_xs_row);
    case gguf::TensorType::MXFP4:
      return pack_rows<BlockMXFP4>(rows, nb, out, mxfp4_row);
    case gguf::TensorType::Q3_K:
      return pack_rows<BlockQ3_K>(rows, nb, out, q3_k_row);
    case gguf::TensorType::Q2_K:
      return pack_rows<BlockQ2_K>(rows, nb, out, q2_k_row);
    case gguf::TensorType::Q4_K:
      return pack_rows<BlockQ4_K>(rows, nb, out, q4_5_k_row<BlockQ4_K>);
    case gguf::TensorType::Q5_K:
      return pack_rows<BlockQ5_K>(rows, nb, out, q4_5_k_row<BlockQ5_K>);
    default:
      return pack_rows<BlockQ6_K>(rows, nb, out, q6_k_row);
  }
}

void unpack_tile16_row(gguf::TensorType t, const uint8_t* tile, int64_t nb, int r, uint8_t* out) {
  switch (t) {
    case gguf::TensorType::Q8_0:
      return unpack_row<BlockQ8_0>(tile, nb, r, out, q8_0_row);
    case gguf::TensorType::Q4_0:
      return unpack_row<BlockQ4_0>(tile, nb, r, out, pair_row<BlockQ4_0>);
    case gguf::TensorType::IQ4_NL:
      return unpack_row<BlockIQ4_NL>(tile, nb, r, out, pair_row<BlockIQ4_NL>);
    case gguf::TensorType::Q4_1:
      return unpack_row<BlockQ4_1>(tile, nb, r, out, pair_row<BlockQ4_1>);
    case gguf::TensorType::Q5_0:
      return unpack_row<BlockQ5_0>(tile, nb, r, out, pair_row<BlockQ5_0>);
    case gguf::TensorType::IQ4_XS:
      return unpack_row<BlockIQ4_XS>(tile, nb, r, out, iq4_xs_row);
    case gguf::TensorType::MXFP4:
      return unpack_row<BlockMXFP4>(tile, nb, r, out, mxfp4_row);
    case gguf::TensorType::Q3_K:
      return unpack_row<BlockQ3_K>(tile, nb, r, out, q3_k_row);
    case gguf::TensorType::Q2_K:
      return unpack_row<BlockQ2_K>(tile, nb, r, out, q2_k_row);
    case gguf::TensorType::Q4_K:
      return unpack_row<BlockQ4_K>(tile, nb, r, out, q4_5_k_row<BlockQ4_K>);
    case gguf::TensorType::Q5_K:
      return unpack_row<BlockQ5_K>(tile, nb, r, out, q4_5_k_row<BlockQ5_K>);
    default:
      return unpack_row<BlockQ6_K>(tile, nb, r, out, q6_k_row);
  }
}

}  // namespace baton::kernels
