#include "kernels/interleave.h"

#include <algorithm>
#include <stdexcept>

#include "kernels/matmul_impl.h"
#include "kernels/quantize.h"
#include "kernels/tiles16.h"

namespace baton::kernels {
namespace {

int64_t tiles_of(const MatrixView& w) {
  return (w.rows + kInterleaveRows - 1) / kInterleaveRows;
}

int64_t blocks_per_row(const MatrixView& w) {
  return int64_t(w.row_stride) / block_shape(w.type).bytes;
}

int64_t tile_bytes(const MatrixView& w) {
  return tile16_bytes(w.type, blocks_per_row(w));
}

// Tiles [t0, t1) of w into dst.
void copy_tiles(const MatrixView& w, uint8_t* dst, int64_t t0, int64_t t1) {
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

static_assert(kInterleaveRows == kTile16);

bool interleavable(const MatrixView& w) {
  return w.interleave == 1 && has_tiles16(w.type) && w.rows > 0 &&
         w.row_stride == kernel_row_bytes(w.type, w.cols);
}

size_t interleaved_bytes(const MatrixView& w) {
  return size_t(tiles_of(w) * tile_bytes(w));
}

const uint8_t* tile_at(const MatrixView& w, int64_t row) {
  return static_cast<const uint8_t*>(w.data) + (row / kTile16) * tile_bytes(w);
}

MatrixView interleave_rows(const MatrixView& w, uint8_t* dst, ThreadPool* pool) {
  if (!interleavable(w)) {
    throw std::invalid_argument("interleave_rows: only a plain, packed quantized matrix");
  }
  auto copy = [&](int64_t t0, int64_t t1) { copy_tiles(w, dst, t0, t1); };
  if (pool != nullptr) {
    pool->parallel_for(tiles_of(w), copy);
  } else {
    copy(0, tiles_of(w));
  }
  MatrixView v = w;
  v.data = dst;
  v.interleave = int32_t(kTile16);
  return v;
}

void copy_plain_row(const MatrixView& w, int64_t row, uint8_t* out) {
  unpack_tile16_row(w.type, tile_at(w, row), blocks_per_row(w), int(row % kTile16), out);
}

}  // namespace baton::kernels
