#pragma once
// Internal pieces of matmul shared by the per-level kernel files.
//
// Quantized weights are read as "signed int8 per element, float scale per 16-element half
// block, optional float offset per 32-element block":  W[i] = s_half * q[i] + off_block / 32
// summed over the block, i.e. sum_i W[i]*x[i] = s_lo*dot_lo + s_hi*dot_hi + off*sum(x).
//   Q8_0: q, s = d, no offset.          Q4_0: q = nibble - 8, s = d.
//   Q4_K: q = nibble - 8, s = d*sc, off = 8*s - dmin*m.    Q6_K: q = level - 32, s = d*sc.
//   Q4_1: q = nibble, s = d, off = m.   Q5_0: q = level - 16, s = d.   IQ4_NL: q = table[nibble].
//   Q5_K: q = level, s = d*sc, off = -dmin*m.   Q3_K: q = level - 4*(no high bit), s = d*(sc-32).
//   IQ4_XS: q = table[nibble], s = d*(ls-32).   MXFP4: q = table[nibble] (its E2M1 values
//   doubled), s = 2^(e-128) (e8m0_half).
//   Q2_K has a min per 16 elements, so its offset is per half block too (off2, times
//   dx * sum(xq) of that half: QuantizedX::s2); no other type uses or computes those.
// x is quantized per 32 elements to xq with a scale dx per block and sx = dx * sum(xq), rounded
// as llama.cpp rounds x for the same weight type (XRounding), so that a quantized file gives
// llama.cpp's logits to within its own noise: the rounding of x, not of the weights, is most of
// the difference otherwise (a mixture-of-experts router near a tie picks another expert).
#include <cstdint>
#include <vector>

#include "kernels/blocks.h"
#include "kernels/matmul.h"

namespace baton::kernels {

// The AVX-512 kernels multiply unsigned weight bytes u = q + B (B a per-type constant, see
// avx512_lane_form) with the signed xq, and start each 4-byte lane's sum at -B times the sum of
// the xq that lane multiplies: the integer sums are exactly those of q * xq.
struct LaneForm {
  int32_t bias = 0;    // B; 0 = no corrections needed (or a level that does not use them)
  bool split = false;  // the two 16-element halves are summed apart (one scale each)
  bool whole = false;  // one lane per weight row (the 16-row tiles): one correction per block
};

// llama.cpp's three roundings of x (its q8_0, q8_1 and q8_K), by weight type (x_rounding).
// In each, xq = round-to-nearest-even(x * (127 / amax)).
enum class XRounding : uint8_t {
  Q8_0,  // amax per 32; dx = fp16(amax / 127)
  Q8_1,  // as Q8_0, and sx = fp16((amax / 127) * sum(xq)) (the weights with an offset per block)
  Q8_K,  // amax per 256 (8 blocks share dx); dx = 1 / (127 / amax) in float (the K-quants)
};
XRounding x_rounding(gguf::TensorType w);

struct QuantizedX {
  XRounding rounding = XRounding::Q8_0;
  int64_t n_x = 0;
  int64_t nb = 0;           // blocks per row
  bool half_sums = false;   // s2 is filled (weights with per-half offsets)
  LaneForm lanes;           // corr is filled when lanes.bias != 0
  std::vector<uint8_t> qs;  // n_x * nb * 32: xq as int8
  std::vector<float> d;     // n_x * nb
  std::vector<float> s;     // n_x * nb: d * sum(xq)
  std::vector<float> s2;    // n_x * nb * 2 when half_sums: d * sum(xq) of each 16-element half
  // n_x * nb * 8: per block, -B * (xq[4j..4j+3] + xq[16+4j..16+4j+3]) for lanes j = 0..3, or
  // with lanes.split the low half's 4 lanes then the high half's; with lanes.whole, -B * the
  // sum of all 32 in the first (with lanes.split too: of the low half, then of the high half).
  std::vector<int32_t> corr;
  const uint8_t* row_qs(int64_t r) const { return qs.data() + r * nb * kQK; }
  const float* row_d(int64_t r) const { return d.data() + r * nb; }
  const float* row_s(int64_t r) const { return s.data() + r * nb; }
  const float* row_s2(int64_t r) const { return s2.data() + r * nb * 2; }
  const int32_t* row_corr(int64_t r) const { return corr.data() + r * nb * 8; }
};

void resize_quantized_x(QuantizedX& q, int64_t n_x, int64_t nb, bool half_sums = false,
                        LaneForm lanes = {}, XRounding rounding = XRounding::Q8_0);
// The scale of a group of blocks with largest magnitude amax (finite), and the factor x is
// multiplied by before rounding; both 0 when amax is 0. Every level uses these.
struct XScale {
  float d = 0, id = 0;
};
XScale x_scale(XRounding rounding, float amax);
// The sx of a block of scale d whose quants sum to sum (amax: the group's largest magnitude).
float x_block_sum(XRounding rounding, float d, float amax, int32_t sum);
// Blocks of x that share one scale.
inline int64_t x_group_blocks(XRounding rounding) {
  return rounding == XRounding::Q8_K ? 8 : 1;
}
// Quantizes row r of x into q (identical results at every level). A block holding NaN or Inf
// gets quants 0 and d = s = NaN (non_finite_block), so every product over it is NaN, as float
// arithmetic would make it, and no float is converted to an integer out of range.
void quantize_x_row(const float* x, QuantizedX& q, int64_t r);
void quantize_x_row_avx512(const float* x, QuantizedX& q, int64_t r);
void non_finite_block(QuantizedX& q, int64_t r, int64_t b);
// Fills s2 of row r from its quantized values (integer sums: the same at every level).
void half_sums_row(QuantizedX& q, int64_t r);
// Fills corr of row r (when q.lanes.bias != 0).
void lane_corrections_row(QuantizedX& q, int64_t r);
// The lane form of the AVX-512 kernel for w (its type and layout).
LaneForm avx512_lane_form(const MatrixView& w);
// The lane form of the 16-row tile kernel for type t (kernels/tiles16.h).
LaneForm tiles16_lane_form(gguf::TensorType t);

// One weight row in the form above, for the scalar and AVX2 kernels.
struct UnpackedRow {
  std::vector<int8_t> q;      // cols
  std::vector<float> scale8;  // 8 per block: s_lo x4, s_hi x4
  std::vector<float> off;     // per block
  std::vector<float> off2;    // per half block, only for types with per-half offsets (Q2_K)
};
// values = false fills only the scales and offsets (for kernels that decode weights in place).
void unpack_row(gguf::TensorType t, const uint8_t* row, int64_t cols, UnpackedRow& out,
                bool values = true);

// Computes y for weight rows [o_begin, o_end) and every row of x. The caller runs rows
// [o_end, o_stream_end) on this thread next (ThreadPool::parallel_for_dynamic's run): a kernel
// may prefetch them while it computes these.
void quant_rows_scalar(const MatrixView& w, const QuantizedX& x, int64_t o_begin, int64_t o_end,
                       int64_t o_stream_end, float* y);
void quant_rows_avx2(const MatrixView& w, const QuantizedX& x, int64_t o_begin, int64_t o_end,
                     int64_t o_stream_end, float* y);
void quant_rows_avx512(const MatrixView& w, const QuantizedX& x, int64_t o_begin, int64_t o_end,
                       int64_t o_stream_end, float* y);
// The 32 levels of block b of a row of quantized type t (not Q8_0) as the AVX2 kernel decodes
// them in place: unpack_row's q values, bit for bit (kernel tests check it). Needs AVX2.
void avx2_block_levels(gguf::TensorType t, const uint8_t* row, int64_t b, int8_t* out);
// quant_rows_avx512 for weights in the 16-row tile layout.
void quant_rows16_avx512(const MatrixView& w, const QuantizedX& x, int64_t o_begin, int64_t o_end,
                         int64_t o_stream_end, float* y);
void float_rows_scalar(const MatrixView& w, const float* x, int64_t n_x, int64_t o_begin,
                       int64_t o_end, float* y);
void float_rows_avx2(const MatrixView& w, const float* x, int64_t n_x, int64_t o_begin,
                     int64_t o_end, float* y);
void float_rows_avx512(const MatrixView& w, const float* x, int64_t n_x, int64_t o_begin,
                       int64_t o_end, float* y);

// Q2_K: the one type whose offsets are per 16-element half (see above).
constexpr bool has_half_offsets(gguf::TensorType t) {
  return t == gguf::TensorType::Q2_K;
}

inline bool is_float_type(gguf::TensorType t) {
  return t == gguf::TensorType::F32 || t == gguf::TensorType::F16 || t == gguf::TensorType::BF16;
}

}  // namespace baton::kernels
