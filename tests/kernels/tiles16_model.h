#pragma once
// A scalar model of the 16-row tile kernel's arithmetic (src/kernels/matmul_avx512_r16.cpp),
// written from the file's blocks: for each 32-element block, the integer dot product of the
// type's levels with the quantized x (per 16-element half for the types with a scale per 16),
// then acc = fma(I, s * dx, acc) for each half, then the offsets: acc = fma(off, sx, acc) per
// block (Q4_1, Q4_K, Q5_K) or per half (Q2_K, with each half's sx).
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/blocks.h"
#include "kernels/fp16.h"
#include "kernels/matmul.h"
#include "kernels/matmul_impl.h"

namespace baton::kernels::testing {

using gguf::TensorType;

// One block's terms in the model's order.
struct BlockTerms {
  int halves = 1;   // 2: dot and scale per 16-element half
  int offsets = 0;  // 1: one offset per block; 2: one per half
  int32_t dot[2] = {0, 0};
  float scale[2] = {0, 0};
  float off[2] = {0, 0};
};

// dot[i / 16 when split] += level(i) * xq[i] for the block's 32 elements.
template <class Level>
void dot_levels(BlockTerms& t, const int8_t* xq, Level level) {
  for (int i = 0; i < kQK; ++i) t.dot[t.halves == 2 ? i / 16 : 0] += level(i) * xq[i];
}

template <class Block>
Block block_at(const uint8_t* row, int64_t index) {
  Block blk;
  std::memcpy(&blk, row + index * int64_t(sizeof blk), sizeof blk);
  return blk;
}

// Nibble of element i of a 16-byte Q4_0-style block: low nibbles 0..15, high 16..31.
inline int nibble_at(const uint8_t* qs, int i) {
  return (qs[i % 16] >> (4 * (i / 16))) & 0xF;
}

inline BlockTerms small_block_terms(TensorType t, const uint8_t* row, int64_t b, const int8_t* xq) {
  BlockTerms bt;
  if (t == TensorType::Q8_0) {
    const auto blk = block_at<BlockQ8_0>(row, b);
    dot_levels(bt, xq, [&](int i) { return int(blk.qs[i]); });
    bt.scale[0] = fp16_to_fp32(blk.d);
  } else if (t == TensorType::Q4_0 || t == TensorType::IQ4_NL) {
    const auto blk = block_at<BlockQ4_0>(row, b);  // IQ4_NL has the same bytes
    dot_levels(bt, xq, [&](int i) {
      const int n = nibble_at(blk.qs, i);
      return t == TensorType::Q4_0 ? n - 8 : int(kIQ4NLValues[n]);
    });
    bt.scale[0] = fp16_to_fp32(blk.d);
  } else if (t == TensorType::MXFP4) {
    const auto blk = block_at<BlockMXFP4>(row, b);
    dot_levels(bt, xq, [&](int i) { return int(kMXFP4Values[nibble_at(blk.qs, i)]); });
    bt.scale[0] = e8m0_half(blk.e);
  } else if (t == TensorType::Q4_1) {
    const auto blk = block_at<BlockQ4_1>(row, b);
    dot_levels(bt, xq, [&](int i) { return nibble_at(blk.qs, i); });
    bt.scale[0] = fp16_to_fp32(blk.d);
    bt.offsets = 1;
    bt.off[0] = fp16_to_fp32(blk.m);
  } else {  // Q5_0
    const auto blk = block_at<BlockQ5_0>(row, b);
    uint32_t fifth;
    std::memcpy(&fifth, blk.qh, 4);
    dot_levels(bt, xq,
               [&](int i) { return (nibble_at(blk.qs, i) | int((fifth >> i) & 1) << 4) - 16; });
    bt.scale[0] = fp16_to_fp32(blk.d);
  }
  return bt;
}

// Q4_K and Q5_K (fifth(j, i): the fifth bit of element i of sub-block j, 0 for Q4_K).
template <class Block, class Fifth>
BlockTerms q4_5_k_terms(const Block& blk, int j, const int8_t* xq, Fifth fifth) {
  BlockTerms bt;
  uint8_t sc, m;
  q4k_scale_min(j, blk.scales, &sc, &m);
  dot_levels(bt, xq, [&](int i) {
    return ((blk.qs[32 * (j / 2) + i] >> (4 * (j % 2))) & 0xF) + 16 * fifth(j, i);
  });
  bt.scale[0] = fp16_to_fp32(blk.d) * float(sc);
  bt.offsets = 1;
  bt.off[0] = (0.f - fp16_to_fp32(blk.dmin)) * float(m);
  return bt;
}

inline BlockTerms k_block_terms(TensorType t, const uint8_t* row, int64_t b, const int8_t* xq) {
  const int j = int(b % 8), n = j / 4, k = j % 4;
  BlockTerms bt;
  bt.halves = 2;
  if (t == TensorType::Q4_K) {
    return q4_5_k_terms(block_at<BlockQ4_K>(row, b / 8), j, xq, [](int, int) { return 0; });
  } else if (t == TensorType::Q5_K) {
    const auto blk = block_at<BlockQ5_K>(row, b / 8);
    return q4_5_k_terms(blk, j, xq, [&](int jj, int i) { return (blk.qh[i] >> jj) & 1; });
  } else if (t == TensorType::Q6_K) {
    const auto blk = block_at<BlockQ6_K>(row, b / 8);
    dot_levels(bt, xq, [&](int i) {
      const int lo = (blk.ql[64 * n + 32 * (k % 2) + i] >> (4 * (k / 2))) & 0xF;
      return (lo | ((blk.qh[32 * n + i] >> (2 * k)) & 3) << 4) - 32;
    });
    for (int h = 0; h < 2; ++h) bt.scale[h] = fp16_to_fp32(blk.d) * float(blk.scales[2 * j + h]);
  } else if (t == TensorType::Q3_K) {
    const auto blk = block_at<BlockQ3_K>(row, b / 8);
    dot_levels(bt, xq, [&](int i) {
      return (((blk.qs[32 * n + i] >> (2 * k)) & 3) | ((blk.hmask[i] >> j) & 1) << 2) - 4;
    });
    for (int h = 0; h < 2; ++h) {
      bt.scale[h] = fp16_to_fp32(blk.d) * float(q3k_scale(2 * j + h, blk.scales) - 32);
    }
  } else if (t == TensorType::Q2_K) {
    const auto blk = block_at<BlockQ2_K>(row, b / 8);
    dot_levels(bt, xq, [&](int i) { return (blk.qs[32 * n + i] >> (2 * k)) & 3; });
    bt.offsets = 2;
    for (int h = 0; h < 2; ++h) {
      bt.scale[h] = fp16_to_fp32(blk.d) * float(blk.scales[2 * j + h] & 0xF);
      bt.off[h] = (0.f - fp16_to_fp32(blk.dmin)) * float(blk.scales[2 * j + h] >> 4);
    }
  } else {  // IQ4_XS
    const auto blk = block_at<BlockIQ4_XS>(row, b / 8);
    bt.halves = 1;
    dot_levels(bt, xq, [&](int i) { return int(kIQ4NLValues[nibble_at(blk.qs + 16 * j, i)]); });
    bt.scale[0] = fp16_to_fp32(blk.d) * float(iq4xs_scale(j, blk) - 32);
  }
  return bt;
}

// Row o of `plain` against x row r of qx (quantized with half sums).
inline float tiles16_model_dot(const MatrixView& plain, int64_t o, const QuantizedX& qx,
                               int64_t r) {
  const auto* row = static_cast<const uint8_t*>(plain.data) + o * int64_t(plain.row_stride);
  const bool k_type = block_shape(plain.type).elems == kQKK;
  float acc = 0;
  for (int64_t b = 0; b < qx.nb; ++b) {
    const auto* xq = reinterpret_cast<const int8_t*>(qx.row_qs(r)) + b * kQK;
    const BlockTerms bt =
        k_type ? k_block_terms(plain.type, row, b, xq) : small_block_terms(plain.type, row, b, xq);
    const float dx = qx.row_d(r)[b];
    for (int h = 0; h < bt.halves; ++h) acc = std::fma(float(bt.dot[h]), bt.scale[h] * dx, acc);
    if (bt.offsets == 1) acc = std::fma(bt.off[0], qx.row_s(r)[b], acc);
    for (int h = 0; bt.offsets == 2 && h < 2; ++h) {
      acc = std::fma(bt.off[h], qx.row_s2(r)[2 * b + h], acc);
    }
  }
  return acc;
}

// y[r * rows + o] for every x row, as matmul lays it out.
inline std::vector<float> tiles16_model(const MatrixView& plain, const std::vector<float>& x,
                                        int64_t n_x) {
  QuantizedX qx;
  resize_quantized_x(qx, n_x, plain.cols / kQK, /*half_sums=*/true, LaneForm{},
                     x_rounding(plain.type));
  for (int64_t r = 0; r < n_x; ++r) {
    quantize_x_row(x.data() + r * plain.cols, qx, r);
    half_sums_row(qx, r);
  }
  std::vector<float> y(size_t(n_x * plain.rows));
  for (int64_t r = 0; r < n_x; ++r) {
    for (int64_t o = 0; o < plain.rows; ++o) {
      y[size_t(r * plain.rows + o)] = tiles16_model_dot(plain, o, qx, r);
    }
  }
  return y;
}

}  // namespace baton::kernels::testing
