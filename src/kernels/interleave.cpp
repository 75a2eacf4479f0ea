#include "kernels/interleave.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "kernels/blocks.h"
#include "kernels/matmul_impl.h"
#include "kernels/quantize.h"
#include "kernels/tiles16.h"

namespace baton::kernels {
namespace {

constexpr int64_t kTile = 4;

int64_t width_of(const MatrixView& w) {
  return w.interleave == 1 ? interleave_width(w.type) : w.interleave;
}

int64_t tiles_of(const MatrixView& w) {
  return (w.rows + width_of(w) - 1) / width_of(w);
}

int64_t blocks_per_row(const MatrixView& w) {
  return int64_t(w.row_stride) / block_shape(w.type).bytes;
}

int64_t tile_bytes(const MatrixView& w) {
  return width_of(w) == kTile16 ? tile16_bytes(w.type, blocks_per_row(w))
                                : blocks_per_row(w) * tile_block_bytes(w.type);
}

// Copies one direction between a plain byte range and its place in a tile.
void move_bytes(bool to_tile, void* tile, void* plain, size_t n) {
  if (to_tile) {
    std::memcpy(tile, plain, n);
  } else {
    std::memcpy(plain, tile, n);
  }
}

// Moves row i between a block and its tile, in the direction to_tile says: Q4_K's nibbles, d
// and dmin as bytes, its 6-bit scales and mins unpacked (or packed back).
void tile_row(bool to_tile, TileQ4_K& t, BlockQ4_K& b, int i) {
  for (int m = 0; m < 4; ++m) {
    for (int h = 0; h < 2; ++h)
      move_bytes(to_tile, &t.qs[m][h][16 * i], b.qs + 32 * m + 16 * h, 16);
  }
  move_bytes(to_tile, &t.d[i], &b.d, 2);
  move_bytes(to_tile, &t.dmin[i], &b.dmin, 2);
  if (to_tile) {
    for (int j = 0; j < 8; ++j) q4k_scale_min(j, b.scales, &t.sc[j][i], &t.mn[j][i]);
    return;
  }
  uint8_t sc[8], mn[8];
  for (int j = 0; j < 8; ++j) {
    sc[j] = t.sc[j][i];
    mn[j] = t.mn[j][i];
  }
  q4k_pack_scales(sc, mn, b.scales);
}

// Q6_K: every byte of row i, regrouped.
void tile_row(bool to_tile, TileQ6_K& t, BlockQ6_K& b, int i) {
  for (int n = 0; n < 2; ++n) {
    for (int h = 0; h < 2; ++h) {
      for (int c = 0; c < 2; ++c) {
        move_bytes(to_tile, &t.ql[n][c][h][16 * i], b.ql + 64 * n + 32 * c + 16 * h, 16);
      }
      move_bytes(to_tile, &t.qh[n][h][16 * i], b.qh + 32 * n + 16 * h, 16);
    }
  }
  for (int v = 0; v < 16; ++v) move_bytes(to_tile, &t.scales[v][i], &b.scales[v], 1);
  move_bytes(to_tile, &t.d[i], &b.d, 2);
}

// One tile block from the 4 rows' blocks, and row i's block back from it.
template <class Block, class Tile>
void pack_tile(const uint8_t* const rows[kTile], uint8_t* out) {
  Tile t;
  for (int i = 0; i < kTile; ++i) {
    Block b;
    std::memcpy(&b, rows[i], sizeof b);
    tile_row(true, t, b, i);
  }
  std::memcpy(out, &t, sizeof t);
}

template <class Block, class Tile>
void unpack_tile(const uint8_t* tile, int i, uint8_t* out) {
  Tile t;
  std::memcpy(&t, tile, sizeof t);
  Block b;
  tile_row(false, t, b, i);
  std::memcpy(out, &b, sizeof b);
}

}  // namespace

int32_t interleave_width(gguf::TensorType t) {
  return has_tiles16(t) ? int32_t(kTile16) : int32_t(kTile);
}

bool interleavable(const MatrixView& w) {
  return w.interleave == 1 && !is_float_type(w.type) && block_shape(w.type).elems > 0 &&
         w.rows > 0 && w.row_stride == kernel_row_bytes(w.type, w.cols);
}

size_t interleaved_bytes(const MatrixView& w) {
  return size_t(tiles_of(w) * tile_bytes(w));
}

int64_t tile_block_bytes(gguf::TensorType t) {
  return t == gguf::TensorType::Q4_K ? int64_t(sizeof(TileQ4_K)) : kTile * block_shape(t).bytes;
}

const uint8_t* tile_at(const MatrixView& w, int64_t row) {
  return static_cast<const uint8_t*>(w.data) + (row / w.interleave) * tile_bytes(w);
}

namespace {

// Tiles [t0, t1) of w in the 16-row layout.
void copy_tiles16(const MatrixView& w, uint8_t* dst, int64_t t0, int64_t t1) {
  const auto* src = static_cast<const uint8_t*>(w.data);
  for (int64_t t = t0; t < t1; ++t) {
    const uint8_t* rows[kTile16];
    for (int64_t i = 0; i < kTile16; ++i) {
      rows[i] = src + std::min(t * kTile16 + i, w.rows - 1) * int64_t(w.row_stride);
    }
    pack_tile16(w.type, rows, blocks_per_row(w), dst + t * tile_bytes(w));
  }
}

}  // namespace

MatrixView interleave_rows(const MatrixView& w, uint8_t* dst, ThreadPool* pool) {
  if (!interleavable(w)) {
    throw std::invalid_argument("interleave_rows: only a plain, packed quantized matrix");
  }
  MatrixView v = w;
  v.data = dst;
  v.interleave = interleave_width(w.type);
  if (v.interleave == kTile16) {
    auto copy = [&](int64_t t0, int64_t t1) { copy_tiles16(w, dst, t0, t1); };
    pool != nullptr ? pool->parallel_for(tiles_of(w), copy) : copy(0, tiles_of(w));
    return v;
  }
  const int64_t block = block_shape(w.type).bytes;
  const int64_t nb = blocks_per_row(w);
  const auto* src = static_cast<const uint8_t*>(w.data);
  const bool q4_k = w.type == gguf::TensorType::Q4_K, q6_k = w.type == gguf::TensorType::Q6_K;
  auto copy_tiles = [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      uint8_t* out = dst + t * tile_bytes(w);
      const uint8_t* rows[kTile];
      for (int64_t i = 0; i < kTile; ++i) {
        rows[i] = src + std::min(t * kTile + i, w.rows - 1) * int64_t(w.row_stride);
      }
      for (int64_t b = 0; b < nb; ++b) {
        if (q4_k || q6_k) {
          const uint8_t* blocks[kTile];
          for (int64_t i = 0; i < kTile; ++i) blocks[i] = rows[i] + b * block;
          q4_k ? pack_tile<BlockQ4_K, TileQ4_K>(blocks, out)
               : pack_tile<BlockQ6_K, TileQ6_K>(blocks, out);
          out += tile_block_bytes(w.type);
          continue;
        }
        for (int64_t i = 0; i < kTile; ++i, out += block) {
          std::memcpy(out, rows[i] + b * block, size_t(block));
        }
      }
    }
  };
  if (pool != nullptr) {
    pool->parallel_for(tiles_of(w), copy_tiles);
  } else {
    copy_tiles(0, tiles_of(w));
  }
  return v;
}

void copy_plain_row(const MatrixView& w, int64_t row, uint8_t* out) {
  const int64_t block = block_shape(w.type).bytes;
  const int64_t nb = blocks_per_row(w);
  const uint8_t* tile = tile_at(w, row);
  if (w.interleave == kTile16) return unpack_tile16_row(w.type, tile, nb, int(row % kTile16), out);
  const int i = int(row % kTile);
  const int64_t tile_block = tile_block_bytes(w.type);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* from = tile + b * tile_block;
    if (w.type == gguf::TensorType::Q4_K) {
      unpack_tile<BlockQ4_K, TileQ4_K>(from, i, out + b * block);
    } else if (w.type == gguf::TensorType::Q6_K) {
      unpack_tile<BlockQ6_K, TileQ6_K>(from, i, out + b * block);
    } else {
      std::memcpy(out + b * block, from + i * block, size_t(block));
    }
  }
}

}  // namespace baton::kernels
