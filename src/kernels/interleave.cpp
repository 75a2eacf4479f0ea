#include "kernels/interleave.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "kernels/matmul_impl.h"
#include "kernels/quantize.h"

namespace baton::kernels {
namespace {

constexpr int64_t kTile = 4;

int64_t tiles_of(const MatrixView& w) {
  return (w.rows + kTile - 1) / kTile;
}

}  // namespace

bool interleavable(const MatrixView& w) {
  return w.interleave == 1 && !is_float_type(w.type) && block_shape(w.type).elems > 0 &&
         w.rows > 0 && w.row_stride == kernel_row_bytes(w.type, w.cols);
}

size_t interleaved_bytes(const MatrixView& w) {
  return size_t(tiles_of(w) * kTile) * w.row_stride;
}

MatrixView interleave_rows4(const MatrixView& w, uint8_t* dst, ThreadPool* pool) {
  if (!interleavable(w)) {
    throw std::invalid_argument("interleave_rows4: only a plain, packed quantized matrix");
  }
  const int64_t block = block_shape(w.type).bytes;
  const int64_t nb = int64_t(w.row_stride) / block;
  const auto* src = static_cast<const uint8_t*>(w.data);
  auto copy_tiles = [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      uint8_t* out = dst + t * kTile * int64_t(w.row_stride);
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
  MatrixView v = w;
  v.data = dst;
  v.interleave = int32_t(kTile);
  return v;
}

void copy_plain_row(const MatrixView& w, int64_t row, uint8_t* out) {
  const int64_t block = block_shape(w.type).bytes;
  const int64_t nb = int64_t(w.row_stride) / block;
  const auto* tile =
      static_cast<const uint8_t*>(w.data) + (row / kTile) * kTile * int64_t(w.row_stride);
  for (int64_t b = 0; b < nb; ++b) {
    std::memcpy(out + b * block, tile + (b * kTile + row % kTile) * block, size_t(block));
  }
}

}  // namespace baton::kernels
