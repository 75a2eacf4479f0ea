#pragma once
// The 16-row tile layout of every quantized weight type, for the AVX-512 VNNI kernel
// (matmul_avx512_r16.cpp). Internal to the kernels module.
//
// One vpdpbusd multiplies 64 weight bytes by 4 x bytes broadcast to every 32-bit lane. With
// lane r holding 4 consecutive weights of row r, one instruction serves 16 rows and each lane
// ends a 32-element block with that row's whole integer dot product: the float step (scale,
// offset) runs once per 16 rows and x row, not once per 4, and nothing is summed across lanes.
// The file-layout kernel (matmul_avx512.cpp, 4 rows per register) spends most of its
// instructions on those steps.
//
// A tile holds rows 16t..16t+15 (a last partial tile repeats its last row) as one stream read
// front to back (scales before the quants they scale), its loads 64-byte aligned when the tile
// is:
//   Q8_0  pairs of blocks, 1088 B each: the two blocks' scales (16 f16 d each, 64 B), block
//         2p's quants, block 2p+1's quants. Quants of a block: quad q (elements 4q..4q+3) at
//         64q, row r's 4 bytes at +4r, stored as level + 128 (the kernel's unsigned operand). A
//         last odd block leaves its pair's last 512 B unused.
//   Q4_0  pairs of blocks, 576 B each: the two blocks' d (32 B each), then each block's 256 B
//         of quants: 4 quads q' of 64 B, row r's 4 bytes qs[4q' ..] at +4r as in the file (low
//         nibbles: elements 4q'.., high nibbles: elements 16 + 4q'..).
//   IQ4_NL as Q4_0.
//   Q4_1  pairs of blocks, 640 B each: the two blocks' d (32 B each), their m (32 B each),
//         then their quants as Q4_0's.
//   Q5_0  pairs of blocks, 704 B each: the two blocks' d (32 B each), their fifth bits (64 B
//         each), then their quants as Q4_0's. Fifth bits: row r's 4 bytes at +4r, bit q' of
//         byte k is element 4q' + k's and bit 4 + q' element 16 + 4q' + k's (the elements whose
//         low 4 bits sit in that byte's place in quad q' of the quants).
//   Q2_K  super-blocks, 1344 B each: 320 B of scales (d[16], dmin[16] f16, then the file's
//         scale-and-min byte of 16-element sub-block v, row r, at 64 + 16v + r), then for each
//         128-element half n 512 B of 2-bit levels laid out as Q3_K's.
//   Q3_K  super-blocks, 1856 B each: 320 B of scales (d[16] f16, then the 6-bit scale of
//         16-element sub-block v, row r, less 32, as an int8 at 32 + 16v + r; 32 B unused),
//         512 B of hmask (quad q of the file's hmask at 64q), then for each 128-element half n
//         512 B of 2-bit levels (quad q of qs[32n..] at 512n + 64q), row r's 4 bytes at +4r as
//         in the file. 32-element block 4n + j takes bits 2j of its half's bytes and bit 4n + j
//         of hmask.
//   Q4_K  super-blocks, 2368 B each: 320 B of scales, then 2048 B of quants. Scales: d[16],
//         dmin[16] (f16), sc[8][16], mn[8][16] (the 6-bit scales and mins of sub-block j, row r,
//         unpacked to bytes). Quants: pair m (sub-blocks 2m and 2m+1, which share the file's
//         qs[32m..32m+31]), quad q at 512m + 64q, row r's 4 bytes qs[32m + 4q ..] at +4r, as in
//         the file (low nibbles: sub-block 2m).
//   Q5_K  super-blocks, 2880 B each: Q4_K's 320 B of scales, then 512 B of fifth bits (quad q
//         of the file's qh at 64q, row r's 4 bytes at +4r: bit j is sub-block j's), then
//         Q4_K's 2048 B of quants (the low 4 bits).
//   Q6_K  super-blocks, 3392 B each: 320 B of scales (d[16] f16, then sc[16][16]: the int8
//         scale of 16-element sub-block v, row r, at 32 + 16v + r; 32 B unused), then for each
//         128-element half n a 1536 B run: qh (quad q of the file's qh[32n..32n+31] at 64q),
//         then ql chunk c = 0, 1 (quad q of ql[64n + 32c ..] at 512 + 512c + 64q), row r's 4
//         bytes at +4r as in the file. 32-element block 4n + k takes chunk k % 2 (high nibbles
//         for k >= 2) and bits 2k of qh.
//   MXFP4 groups of 4 blocks, 1088 B each: the four blocks' exponent bytes (16 B each, row r's
//         at +r), then each block's 256 B of quants, laid out as Q4_0's. Four blocks to a group
//         keep every group 64-byte aligned (a pair would take 544 B).
//   IQ4_XS super-blocks, 2240 B each: d[16] (f16), then the 6-bit scale of block j, row r, less
//         32, as an int8 at 32 + 16j + r (32 B unused), then block j's 256 B of quants at
//         192 + 256j, laid out as Q4_0's.
// Q8_0, Q4_0, IQ4_NL, Q4_1, Q5_0 and Q2_K tiles are exactly as large as the file's rows (for an
// even block count), as are MXFP4's for a multiple of 4 blocks (gpt-oss's 90: 2.2 % larger); Q4_K's
// unpacked and Q5_K's unpacked scales add 64 B per super-block of 16 rows (2.8 %, 2.3 %), IQ4_XS's
// 64 B (2.9 %), Q6_K's alignment 32 B (0.9 %).
#include <cstddef>
#include <cstdint>

#include "gguf/tensor_type.h"

namespace baton::kernels {

inline constexpr int64_t kTile16 = 16;

// A tile is a run of groups: pairs of blocks (Q8_0, Q4_0, ...), fours (MXFP4) or super-blocks
// (the others), each its scales, then its quants.
struct Tile16Shape {
  int64_t blocks = 0;         // file blocks per group: 2 or 4, or 1 super-block
  int64_t bytes = 0;          // per group
  int64_t scale_bytes = 0;    // at the group's start
  int64_t block_quants = 0;   // quant bytes per block of a pair or four
  int64_t block_scales = 32;  // scale bytes per block of a pair or four
};

// The shape of type t's tiles; blocks = 0 for a type without the 16-row layout.
constexpr Tile16Shape tile16_shape(gguf::TensorType t) {
  switch (t) {
    case gguf::TensorType::Q8_0:
      return {2, 1088, 64, 512};
    case gguf::TensorType::Q4_0:
    case gguf::TensorType::IQ4_NL:
      return {2, 576, 64, 256};
    case gguf::TensorType::Q4_1:
      return {2, 640, 128, 256};
    case gguf::TensorType::Q5_0:
      return {2, 704, 192, 256};
    case gguf::TensorType::Q4_K:
      return {1, 2368, 320, 0};
    case gguf::TensorType::Q5_K:
      return {1, 2880, 320, 0};
    case gguf::TensorType::Q6_K:
      return {1, 3392, 320, 0};
    case gguf::TensorType::IQ4_XS:
      return {1, 2240, 192, 0};
    case gguf::TensorType::Q3_K:
      return {1, 1856, 320, 0};
    case gguf::TensorType::Q2_K:
      return {1, 1344, 320, 0};
    case gguf::TensorType::MXFP4:
      return {4, 1088, 64, 256, 16};
    default:
      return {};
  }
}

// Whether type t has the 16-row layout.
constexpr bool has_tiles16(gguf::TensorType t) {
  return tile16_shape(t).blocks > 0;
}

// Where block b (a super-block for the K types and IQ4_XS) of a tile starts its group, its
// quants and its scales (block_scales bytes per block of a pair or four).
constexpr int64_t tile16_quants_at(gguf::TensorType t, int64_t b) {
  const Tile16Shape s = tile16_shape(t);
  return s.bytes * (b / s.blocks) + s.scale_bytes + s.block_quants * (b % s.blocks);
}
constexpr int64_t tile16_group_at(gguf::TensorType t, int64_t b) {
  const Tile16Shape s = tile16_shape(t);
  return s.bytes * (b / s.blocks);
}
constexpr int64_t tile16_scales_at(gguf::TensorType t, int64_t b) {
  const Tile16Shape s = tile16_shape(t);
  return s.bytes * (b / s.blocks) + s.block_scales * (b % s.blocks);
}

// Where block b of a Q4_1 or Q5_0 pair has its second scale field: Q4_1's m (16 f16 after the
// pair's d), Q5_0's fifth bits (64 B each, after the pair's d).
constexpr int64_t tile16_extra_at(gguf::TensorType t, int64_t b) {
  return tile16_group_at(t, b) + 64 + (t == gguf::TensorType::Q5_0 ? 64 : 32) * (b % 2);
}

// Bytes of a tile whose rows have nb blocks (super-blocks for the K types and IQ4_XS).
constexpr int64_t tile16_bytes(gguf::TensorType t, int64_t nb) {
  const Tile16Shape s = tile16_shape(t);
  return s.bytes * ((nb + s.blocks - 1) / s.blocks);
}

// Writes one tile from 16 plain rows of nb blocks each.
void pack_tile16(gguf::TensorType t, const uint8_t* const rows[kTile16], int64_t nb, uint8_t* out);

// Row r (0..15) of a tile back in the file's layout (nb blocks).
void unpack_tile16_row(gguf::TensorType t, const uint8_t* tile, int64_t nb, int r, uint8_t* out);

}  // namespace baton::kernels
