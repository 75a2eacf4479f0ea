#pragma once
// Tile-interleaved copies of quantized weight matrices, for the AVX-512 kernels.
//
// In the file's layout the rows a kernel computes together are streams a row apart, and a
// decode step (one x row) is bound by how many cache misses a core keeps in flight, not by
// bandwidth. Interleaved, a tile of rows is one sequential stream the prefetchers follow:
// - Q8_0, Q4_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_XS go to the 16-row layout of
//   kernels/tiles16.h,
//   where each vector lane is one weight row and a block's float step runs once per 16 rows
//   (its own kernel and arithmetic: the sums are those of the file's values, in another order).
// - The other types go to 4-row tiles: block b of rows 4t..4t+3 side by side, in block order,
//   read by the same kernel as the plain layout, so every product is bit-identical to it.
// A last partial tile repeats its last row.
#include <cstddef>
#include <cstdint>

#include "kernels/matmul.h"
#include "kernels/thread_pool.h"

namespace baton::kernels {

// Rows per tile of type t's interleaved layout: 16 for the types with a 16-row layout
// (kernels/tiles16.h), 4 for the others.
int32_t interleave_width(gguf::TensorType t);

// Whether w can be interleaved (a quantized type, plain layout).
bool interleavable(const MatrixView& w);

// Bytes interleave_rows writes for w.
size_t interleaved_bytes(const MatrixView& w);

// Bytes of one block (one super-block for the K types) of a 4-row tile: 4 blocks side by side.
int64_t tile_block_bytes(gguf::TensorType t);

// Start of the tile holding weight row `row` of an interleaved matrix.
const uint8_t* tile_at(const MatrixView& w, int64_t row);

// Writes w's rows in tiles of interleave_width(w.type) rows to dst (interleaved_bytes(w) bytes)
// and returns the view of that copy. pool may be null.
MatrixView interleave_rows(const MatrixView& w, uint8_t* dst, ThreadPool* pool);

// Row `row` of an interleaved matrix, in the plain layout (row_stride bytes).
void copy_plain_row(const MatrixView& w, int64_t row, uint8_t* out);

}  // namespace baton::kernels
