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
  return kTile * block_shape(t).bytes;
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
  auto copy_tiles = [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      uint8_t* out = dst + t * tile_bytes(w);
      const uint8_t* rows[kTile];
      for (int64_t i = 0; i < kTile; ++i) {
        rows[i] = src + std::min(t * kTile + i, w.rows - 1) * int64_t(w.row_stride);
      }
      for (int64_t b = 0; b < nb; ++b) {
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
  for (int64_t b = 0; b < nb; ++b) {
    std::memcpy(out + b * block, tile + b * tile_block_bytes(w.type) + i * block, size_t(block));
  }
}

}  // namespace baton::kernels
