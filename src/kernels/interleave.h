#pragma once
// Tile-interleaved copies of quantized weight matrices, for the AVX-512 kernels.
//
// Every quantized type is rewritten into the 16-row tiles of kernels/tiles16.h: each vector lane
// of the kernel (matmul_avx512_r16.cpp) is one weight row, a block's float step runs once per 16
// rows, and a tile is one sequential stream the prefetchers follow (in the file's layout the
// rows computed together are streams a row apart, and a decode step is bound by how many cache
// misses a core keeps in flight, not by bandwidth). The sums are those of the file's values in
// another order than the file-layout kernel's, so results differ from it within float rounding.
// A last partial tile repeats its last row.
#include <cstddef>
#include <cstdint>

#include "kernels/matmul.h"
#include "kernels/thread_pool.h"

namespace baton::kernels {

// Weight rows per tile.
inline constexpr int64_t kInterleaveRows = 16;

// Whether w can be interleaved (a quantized type, plain layout).
bool interleavable(const MatrixView& w);

// Bytes interleave_rows writes for w.
size_t interleaved_bytes(const MatrixView& w);

// Start of the tile holding weight row `row` of an interleaved matrix.
const uint8_t* tile_at(const MatrixView& w, int64_t row);

// Writes w's rows in tiles to dst (interleaved_bytes(w) bytes) and returns the view of that
// copy (interleave = kInterleaveRows). pool may be null.
MatrixView interleave_rows(const MatrixView& w, uint8_t* dst, ThreadPool* pool);

// Row `row` of an interleaved matrix, in the plain layout (row_stride bytes).
void copy_plain_row(const MatrixView& w, int64_t row, uint8_t* out);

}  // namespace baton::kernels
