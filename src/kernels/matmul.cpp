#include "kernels/matmul.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/interleave.h"
#include "kernels/matmul_impl.h"
#include "kernels/quantize.h"
#include "kernels/simd.h"

namespace baton::kernels {
namespace {

using gguf::TensorType;

// Weight rows per parallel_for work item: the tile of the SIMD kernels (16 rows interleaved,
// 4 in the file's layout), so a tile never straddles two threads.
int64_t row_tile(const MatrixView& w) {
  return w.interleave != 1 ? kInterleaveRows : 4;
}

void check_view(const MatrixView& w, const float* x, int64_t n_x, const float* y) {
  const size_t rb = kernel_row_bytes(w.type, w.cols);  // throws for bad type / cols
  if (w.rows < 0 || n_x < 0) {
    throw std::invalid_argument("matmul: rows (" + std::to_string(w.rows) + ") and n_x (" +
                                std::to_string(n_x) + ") must be >= 0");
  }
  if (w.rows > 1 && w.row_stride < rb) {
    throw std::invalid_argument("matmul: row_stride " + std::to_string(w.row_stride) +
                                " is below the row size " + std::to_string(rb));
  }
  if (w.rows > 0 && n_x > 0 && (w.data == nullptr || x == nullptr || y == nullptr)) {
    throw std::invalid_argument("matmul: null weight, x or y pointer");
  }
}

SimdLevel clamp_level(SimdLevel l) {
  return int(l) > int(detected_simd_level()) ? detected_simd_level() : l;
}

// fn(o_begin, o_end, o_stream_end): weight rows to compute, and where this thread's run of
// rows ends (see quant_rows_avx512).
void run_rows(ThreadPool* pool, const MatrixView& w,
              const std::function<void(int64_t, int64_t, int64_t)>& fn) {
  const int64_t rows = w.rows, tile = row_tile(w);
  const int64_t tiles = (rows + tile - 1) / tile;
  auto body = [&](int64_t t0, int64_t t1, int64_t run_end) {
    fn(t0 * tile, std::min(rows, t1 * tile), std::min(rows, run_end * tile));
  };
  if (pool != nullptr) {
    // About 8 pieces per thread: small enough to even out a slowed thread, large enough that
    // each piece streams well over a hundred KB of a large matrix.
    pool->parallel_for_dynamic(tiles, std::max<int64_t>(1, tiles / (8 * pool->size())), body);
  } else {
    body(0, tiles, tiles);
  }
}

using QuantKernel = void (*)(const MatrixView&, const QuantizedX&, int64_t, int64_t, int64_t,
                             float*);
using FloatKernel = void (*)(const MatrixView&, const float*, int64_t, int64_t, int64_t, float*);

FloatKernel float_kernel(SimdLevel level) {
  return level == SimdLevel::Avx512 ? float_rows_avx512
         : level == SimdLevel::Avx2 ? float_rows_avx2
                                    : float_rows_scalar;
}

QuantKernel quant_kernel(SimdLevel level) {
  return level == SimdLevel::Avx512 ? quant_rows_avx512
         : level == SimdLevel::Avx2 ? quant_rows_avx2
                                    : quant_rows_scalar;
}

// Checks w for the level (clamped to the CPU's) and returns that level.
SimdLevel level_for(SimdLevel level, const MatrixView& w) {
  level = clamp_level(level);
  if (w.interleave != 1 && level != SimdLevel::Avx512) {
    throw std::invalid_argument(std::string("matmul: interleaved weights need the avx512-vnni "
                                            "kernels, not ") +
                                simd_level_label(level));
  }
  return level;
}

// Sizes qx for n_x rows of x multiplying w.
void prepare_qx(SimdLevel level, const MatrixView& w, int64_t n_x, QuantizedX& qx) {
  const LaneForm lanes = level == SimdLevel::Avx512 ? avx512_lane_form(w) : LaneForm{};
  resize_quantized_x(qx, n_x, w.cols / kQK, has_half_offsets(w.type), lanes, x_rounding(w.type));
}

// Quantizes row r of x (w.cols floats at x) into qx: the same steps in every caller, so a row's
// blocks never depend on the batch around it.
void quantize_row_for(SimdLevel level, const float* x, QuantizedX& qx, int64_t r) {
  if (level == SimdLevel::Avx512) {
    quantize_x_row_avx512(x, qx, r);
  } else {
    quantize_x_row(x, qx, r);
  }
  if (qx.half_sums) half_sums_row(qx, r);
  if (qx.lanes.bias != 0) lane_corrections_row(qx, r);
}

// Below this many multiply-adds, waking the workers costs more than it saves (tiny models
// run hundreds of such products per token). Threads never change a result, so this is free.
constexpr int64_t kMinParallelMacs = int64_t(1) << 16;

}  // namespace

MatrixView view_of(const gguf::TensorInfo& t, const uint8_t* data) {
  if (t.dims.empty() || t.dims.size() > 2) {
    throw std::invalid_argument("view_of: tensor '" + t.name + "' has " +
                                std::to_string(t.dims.size()) + " dims, expected 1 or 2");
  }
  const int64_t cols = int64_t(t.dims[0]);
  const int64_t rows = t.dims.size() == 2 ? int64_t(t.dims[1]) : 1;
  size_t stride = 0;
  try {
    stride = kernel_row_bytes(t.type, cols);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("view_of: tensor '" + t.name + "': " + e.what());
  }
  return MatrixView{t.type, data, rows, cols, stride};
}

void get_row(const MatrixView& w, int64_t row, float* out) {
  if (row < 0 || row >= w.rows) {
    throw std::out_of_range("get_row: row " + std::to_string(row) + " is outside [0, " +
                            std::to_string(w.rows) + ")");
  }
  if (w.interleave != 1) {
    thread_local std::vector<uint8_t> plain;
    plain.resize(w.row_stride);
    copy_plain_row(w, row, plain.data());
    dequantize_row(w.type, plain.data(), out, w.cols);
    return;
  }
  dequantize_row(w.type, static_cast<const uint8_t*>(w.data) + row * w.row_stride, out, w.cols);
}

void matmul_at(SimdLevel level, const MatrixView& w, const float* x, int64_t n_x, float* y,
               ThreadPool* pool) {
  check_view(w, x, n_x, y);
  if (w.rows == 0 || n_x == 0) return;
  level = level_for(level, w);
  if (w.rows * w.cols * n_x < kMinParallelMacs) pool = nullptr;
  if (is_float_type(w.type)) {
    const FloatKernel kernel = float_kernel(level);
    run_rows(pool, w, [&](int64_t o0, int64_t o1, int64_t) { kernel(w, x, n_x, o0, o1, y); });
    return;
  }
  // x is quantized once per call, row by row with one function.
  // Lambdas below run on pool threads, where the name of a thread_local means their own copy:
  // they must go through this reference.
  thread_local QuantizedX qx_storage;
  QuantizedX& qx = qx_storage;
  prepare_qx(level, w, n_x, qx);
  auto quantize = [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) quantize_row_for(level, x + r * w.cols, qx, r);
  };
  if (pool != nullptr && n_x > 1) {
    pool->parallel_for(n_x, quantize);
  } else {
    quantize(0, n_x);
  }
  const QuantizedX& xq = qx;
  const QuantKernel kernel = quant_kernel(level);
  run_rows(pool, w,
           [&](int64_t o0, int64_t o1, int64_t o_run) { kernel(w, xq, o0, o1, o_run, y); });
}

void matmul(const MatrixView& w, const float* x, int64_t n_x, float* y, ThreadPool* pool) {
  matmul_at(active_simd_level(), w, x, n_x, y, pool);
}

namespace {

// A run of weight tiles of one job of matmul_many.
struct Piece {
  size_t job;
  int64_t t0, t1;
};

}  // namespace

void matmul_many(const MatmulJob* jobs, size_t n_jobs, ThreadPool* pool) {
  const SimdLevel level0 = active_simd_level();
  std::vector<SimdLevel> levels(n_jobs);
  int64_t macs = 0, tiles = 0, rows = 0;
  for (size_t j = 0; j < n_jobs; ++j) {
    const MatmulJob& m = jobs[j];
    check_view(m.w, m.x, m.n_x, m.y);
    levels[j] = level_for(level0, m.w);
    if (m.w.rows == 0 || m.n_x == 0) continue;
    macs += m.w.rows * m.w.cols * m.n_x;
    tiles += (m.w.rows + row_tile(m.w) - 1) / row_tile(m.w);
    rows += m.n_x;
  }
  if (macs < kMinParallelMacs) pool = nullptr;
  const int threads = pool != nullptr ? pool->size() : 1;
  // Each job's x in its own buffer (grown, never shrunk, across calls on this thread); the
  // lambdas reach it through this reference (see matmul_at).
  thread_local std::vector<QuantizedX> qx_storage;
  std::vector<QuantizedX>& qx = qx_storage;
  if (qx.size() < n_jobs) qx.resize(n_jobs);
  // Quantize every job's rows in one pass: row i of the flattened list is (job, row).
  std::vector<std::pair<size_t, int64_t>> flat;
  flat.reserve(static_cast<size_t>(rows));
  for (size_t j = 0; j < n_jobs; ++j) {
    const MatmulJob& m = jobs[j];
    if (m.w.rows == 0 || m.n_x == 0 || is_float_type(m.w.type)) continue;
    prepare_qx(levels[j], m.w, m.n_x, qx[j]);
    for (int64_t r = 0; r < m.n_x; ++r) flat.emplace_back(j, r);
  }
  auto quantize = [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const auto [j, r] = flat[i];
      quantize_row_for(levels[j], jobs[j].x + r * jobs[j].w.cols, qx[j], r);
    }
  };
  const auto n_flat = static_cast<int64_t>(flat.size());
  if (pool != nullptr && n_flat > 1) {
    pool->parallel_for(n_flat, quantize);
  } else {
    quantize(0, n_flat);
  }
  // About 8 pieces per thread over all jobs, none straddling two jobs.
  const int64_t grain = std::max<int64_t>(1, tiles / (8 * threads));
  std::vector<Piece> pieces;
  std::vector<int64_t> job_end(n_jobs);  // one past the job's last piece (they are consecutive)
  for (size_t j = 0; j < n_jobs; ++j) {
    const MatmulJob& m = jobs[j];
    if (m.w.rows == 0 || m.n_x == 0) continue;
    const int64_t t = (m.w.rows + row_tile(m.w) - 1) / row_tile(m.w);
    for (int64_t t0 = 0; t0 < t; t0 += grain) pieces.push_back({j, t0, std::min(t, t0 + grain)});
    job_end[j] = static_cast<int64_t>(pieces.size());
  }
  auto run = [&](int64_t p0, int64_t p1, int64_t run_end) {
    for (int64_t p = p0; p < p1; ++p) {
      const Piece& c = pieces[p];
      const MatmulJob& m = jobs[c.job];
      const int64_t tile = row_tile(m.w);
      const int64_t o0 = c.t0 * tile, o1 = std::min(m.w.rows, c.t1 * tile);
      if (is_float_type(m.w.type)) {
        float_kernel(levels[c.job])(m.w, m.x, m.n_x, o0, o1, m.y);
        continue;
      }
      // This thread's next pieces of the same job continue these rows.
      const Piece& last = pieces[std::min(run_end, job_end[c.job]) - 1];
      const int64_t o_run = std::min(m.w.rows, last.t1 * tile);
      quant_kernel(levels[c.job])(m.w, qx[c.job], o0, o1, o_run, m.y);
    }
  };
  const auto n_pieces = static_cast<int64_t>(pieces.size());
  if (pool != nullptr) {
    pool->parallel_for_dynamic(n_pieces, 1, run);
  } else {
    run(0, n_pieces, n_pieces);
  }
}

}  // namespace baton::kernels
