#pragma once
// Matrix × vectors for every supported weight type, with run-time SIMD dispatch.
//
// Batch invariance: each output element is computed by the same sequence of operations whatever
// the batch size, the other rows of x, the thread count and the tile it lands in. Quantized
// weights take x quantized per 32-element block (the same way for every row), integer block
// dot products and one float accumulation per (output, x row) in block order; float weights
// take FMA chains in column order. Tiles only decide how many independent pairs run together.
#include <cstddef>
#include <cstdint>

#include "gguf/gguf_file.h"
#include "gguf/tensor_type.h"
#include "kernels/thread_pool.h"

namespace baton::kernels {

// rows × cols, row-major; GGUF dims[0] = cols, dims[1] = rows; row_stride in bytes.
// interleave 16: the rows are stored in 16-row tiles (kernels/interleave.h); only the AVX-512
// kernels read that layout.
struct MatrixView {
  gguf::TensorType type;
  const void* data;
  int64_t rows;
  int64_t cols;
  size_t row_stride;
  int32_t interleave = 1;
};

// View of a 2-D tensor (a 1-D one is a single row); throws std::invalid_argument for more
// dimensions or an unsupported type.
MatrixView view_of(const gguf::TensorInfo& t, const uint8_t* data);

// y[r * w.rows + o] = sum_i W[o][i] * x[r * w.cols + i], for r < n_x, o < w.rows.
// Each y element is bit-identical whatever n_x, the thread count and the other rows of x are.
// The SIMD level is fixed per process (see simd_level_name). pool may be null (one thread).
void matmul(const MatrixView& w, const float* x, int64_t n_x, float* y, ThreadPool* pool);

// One product of matmul_many: y = w x over n_x rows of x (the layouts of matmul).
struct MatmulJob {
  MatrixView w;
  const float* x = nullptr;
  int64_t n_x = 0;
  float* y = nullptr;
};

// Runs every job with one hand-out of work to the threads: the rows of x of every job are
// quantized in one pass, then the jobs' weight tiles go to whichever thread is free. Each y is
// bit-identical to matmul(job.w, job.x, job.n_x, job.y). For many small products over other
// weights (a step's mixture-of-experts experts), where a pass per product would leave threads
// waiting at each end. Jobs must not write each other's y.
void matmul_many(const MatmulJob* jobs, size_t n_jobs, ThreadPool* pool);

// Dequantizes row `row` of w into out (w.cols floats).
void get_row(const MatrixView& w, int64_t row, float* out);

// "avx512-vnni", "avx2" or "scalar": the level this process uses.
const char* simd_level_name();

}  // namespace baton::kernels
