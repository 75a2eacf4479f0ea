// Scalar reference kernels and the helpers every level shares.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/fp16.h"
#include "kernels/matmul_impl.h"
#include "kernels/quant_block32.h"
#include "kernels/quant_superblock.h"

namespace baton::kernels {

using gguf::TensorType;

XRounding x_rounding(TensorType w) {
  switch (w) {
    case TensorType::Q4_1:
    case TensorType::Q5_1:
      return XRounding::Q8_1;
    case TensorType::Q2_K:
    case TensorType::Q3_K:
    case TensorType::Q4_K:
    case TensorType::Q5_K:
    case TensorType::Q6_K:
    case TensorType::IQ4_XS:
      return XRounding::Q8_K;
    default:
      return XRounding::Q8_0;
  }
}

XScale x_scale(XRounding rounding, float amax) {
  if (amax == 0) return {};
  const float id = 127.f / amax;
  if (rounding == XRounding::Q8_K) return {1.f / id, id};
  return {fp16_to_fp32(fp32_to_fp16(amax / 127.f)), id};
}

float x_block_sum(XRounding rounding, float d, float amax, int32_t sum) {
  if (rounding == XRounding::Q8_1) return fp16_to_fp32(fp32_to_fp16(amax / 127.f * float(sum)));
  return d * float(sum);
}

void resize_quantized_x(QuantizedX& q, int64_t n_x, int64_t nb, bool half_sums, LaneForm lanes,
                        XRounding rounding) {
  q.rounding = rounding;
  q.n_x = n_x;
  q.nb = nb;
  q.half_sums = half_sums;
  q.lanes = lanes;
  if (half_sums) q.s2.resize(size_t(n_x * nb * 2));
  if (lanes.bias != 0) q.corr.resize(size_t(n_x * nb * 8));
  q.qs.resize(size_t(n_x * nb * kQK));
  q.d.resize(size_t(n_x * nb));
  q.s.resize(size_t(n_x * nb));
}

void non_finite_block(QuantizedX& q, int64_t r, int64_t b) {
  std::memset(q.qs.data() + (r * q.nb + b) * kQK, 0, kQK);
  q.d[size_t(r * q.nb + b)] = std::numeric_limits<float>::quiet_NaN();
  q.s[size_t(r * q.nb + b)] = std::numeric_limits<float>::quiet_NaN();
}

void quantize_x_row(const float* x, QuantizedX& q, int64_t r) {
  const int64_t group = x_group_blocks(q.rounding);
  bool finite[8];
  for (int64_t g0 = 0; g0 < q.nb; g0 += group) {
    const int64_t g1 = std::min(q.nb, g0 + group);
    // A block holding NaN or Inf spoils itself only: the group's scale comes from the others.
    float amax = 0;
    for (int64_t b = g0; b < g1; ++b) {
      const float* xb = x + b * kQK;
      float m = 0;
      bool ok = true;
      for (int i = 0; i < kQK; ++i) {
        m = std::max(m, std::fabs(xb[i]));
        ok = ok && std::fabs(xb[i]) <= std::numeric_limits<float>::max();
      }
      finite[b - g0] = ok;
      if (ok) amax = std::max(amax, m);
    }
    const XScale sc = x_scale(q.rounding, amax);
    for (int64_t b = g0; b < g1; ++b) {
      if (!finite[b - g0]) {
        non_finite_block(q, r, b);
        continue;
      }
      const float* xb = x + b * kQK;
      uint8_t* qs = q.qs.data() + (r * q.nb + b) * kQK;
      int sum = 0;
      for (int i = 0; i < kQK; ++i) {
        const int v = int(std::nearbyint(xb[i] * sc.id));
        sum += v;
        qs[i] = uint8_t(v);
      }
      q.d[size_t(r * q.nb + b)] = sc.d;
      q.s[size_t(r * q.nb + b)] = x_block_sum(q.rounding, sc.d, amax, sum);
    }
  }
}

void half_sums_row(QuantizedX& q, int64_t r) {
  const uint8_t* qs = q.row_qs(r);
  for (int64_t b = 0; b < q.nb; ++b, qs += kQK) {
    int sum[2] = {0, 0};
    for (int i = 0; i < kQK; ++i) sum[i / 16] += int(int8_t(qs[i]));
    const float d = q.d[size_t(r * q.nb + b)];
    q.s2[size_t((r * q.nb + b) * 2)] = d * float(sum[0]);
    q.s2[size_t((r * q.nb + b) * 2 + 1)] = d * float(sum[1]);
  }
}

void lane_corrections_row(QuantizedX& q, int64_t r) {
  const uint8_t* qs = q.row_qs(r);
  int32_t* out = q.corr.data() + r * q.nb * 8;
  for (int64_t b = 0; b < q.nb; ++b, qs += kQK, out += 8) {
    if (q.lanes.whole) {
      int32_t lo = 0, hi = 0;  // two plain loops, so that the compiler vectorises them
      for (int i = 0; i < 16; ++i) lo += int8_t(qs[i]);
      for (int i = 16; i < kQK; ++i) hi += int8_t(qs[i]);
      out[0] = -q.lanes.bias * (q.lanes.split ? lo : lo + hi);
      out[1] = q.lanes.split ? -q.lanes.bias * hi : 0;
      continue;
    }
    for (int j = 0; j < 4; ++j) {
      int32_t lo = 0, hi = 0;
      for (int k = 0; k < 4; ++k) {
        lo += int8_t(qs[4 * j + k]);
        hi += int8_t(qs[16 + 4 * j + k]);
      }
      if (q.lanes.split) {
        out[j] = -q.lanes.bias * lo;
        out[4 + j] = -q.lanes.bias * hi;
      } else {
        out[j] = -q.lanes.bias * (lo + hi);
        out[4 + j] = 0;
      }
    }
  }
}

void unpack_row(TensorType t, const uint8_t* row, int64_t cols, UnpackedRow& out, bool values) {
  const int64_t nb = cols / kQK;
  if (values) out.q.resize(size_t(cols));
  out.scale8.resize(size_t(nb * 8));
  out.off.assign(size_t(nb), 0.f);
  if (has_half_offsets(t)) out.off2.assign(size_t(nb * 2), 0.f);
  if (is_block32_type(t)) return unpack_block32(t, row, nb, values, out);
  if (is_superblock_type(t)) unpack_superblock(t, row, cols / kQKK, values, out);
}

void quant_rows_scalar(const MatrixView& w, const QuantizedX& x, int64_t o_begin, int64_t o_end,
                       int64_t /*o_stream_end*/, float* y) {
  thread_local UnpackedRow u;
  const bool half = has_half_offsets(w.type);
  for (int64_t o = o_begin; o < o_end; ++o) {
    unpack_row(w.type, static_cast<const uint8_t*>(w.data) + o * w.row_stride, w.cols, u);
    for (int64_t r = 0; r < x.n_x; ++r) {
      const auto* xq = reinterpret_cast<const int8_t*>(x.row_qs(r));
      const float* xd = x.row_d(r);
      const float* xs = x.row_s(r);
      const float* xs2 = half ? x.row_s2(r) : nullptr;
      float acc = 0;
      for (int64_t b = 0; b < x.nb; ++b) {
        const int8_t* wq = &u.q[size_t(b * kQK)];
        int lo = 0, hi = 0;
        for (int i = 0; i < 16; ++i) lo += wq[i] * xq[b * kQK + i];
        for (int i = 16; i < kQK; ++i) hi += wq[i] * xq[b * kQK + i];
        acc += float(lo) * (u.scale8[size_t(b * 8)] * xd[b]);
        acc += float(hi) * (u.scale8[size_t(b * 8 + 4)] * xd[b]);
        if (half) {
          acc += u.off2[size_t(2 * b)] * xs2[2 * b];
          acc += u.off2[size_t(2 * b + 1)] * xs2[2 * b + 1];
        } else {
          acc += u.off[size_t(b)] * xs[b];
        }
      }
      y[r * w.rows + o] = acc;
    }
  }
}

void float_rows_scalar(const MatrixView& w, const float* x, int64_t n_x, int64_t o_begin,
                       int64_t o_end, float* y) {
  thread_local std::vector<float> row;
  row.resize(size_t(w.cols));
  for (int64_t o = o_begin; o < o_end; ++o) {
    const uint8_t* src = static_cast<const uint8_t*>(w.data) + o * w.row_stride;
    if (w.type == TensorType::F32) {
      std::memcpy(row.data(), src, size_t(w.cols) * 4);
    } else {
      const auto* h = reinterpret_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < w.cols; ++i) {
        row[size_t(i)] = w.type == TensorType::F16 ? fp16_to_fp32(h[i]) : bf16_to_fp32(h[i]);
      }
    }
    for (int64_t r = 0; r < n_x; ++r) {
      const float* xr = x + r * w.cols;
      float acc = 0;
      for (int64_t i = 0; i < w.cols; ++i) acc += row[size_t(i)] * xr[i];
      y[r * w.rows + o] = acc;
    }
  }
}

}  // namespace baton::kernels
