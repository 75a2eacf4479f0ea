#include "model/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/attention_impl.h"

namespace baton::model {
namespace {

// Eight fixed lanes then a fixed combine: vectorizable, and the same bits for the same inputs.
float dot(const float* a, const float* b, int32_t n) {
  float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int32_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) lane[j] += a[i + j] * b[i + j];
  }
  float tail = 0;
  for (; i < n; ++i) tail += a[i] * b[i];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7])) +
         tail;
}

// Softmax numerators in place, summed in position order; returns 1 / sum.
float softmax_weights(float* sc, int32_t n) {
  float mx = -std::numeric_limits<float>::infinity();
  for (int32_t p = 0; p < n; ++p) mx = std::max(mx, sc[p]);
  float sum = 0;
  for (int32_t p = 0; p < n; ++p) {
    sc[p] = std::exp(sc[p] - mx);
    sum += sc[p];
  }
  return 1.0f / sum;
}

}  // namespace

namespace detail {

void attend_rows_scalar(const KvCache& cache, int32_t layer, const AttentionShape& s,
                        int32_t kv_head, const float* q, const int32_t* pos, int32_t n_rows,
                        const int32_t* block_table, float* out, AttentionScratch& scratch) {
  const int32_t group = s.n_head / s.n_head_kv;
  const int32_t hd = s.head_dim;
  const int64_t row_stride = static_cast<int64_t>(s.n_head) * hd;
  const int32_t bs = cache.block_size();
  const int32_t max_pos = *std::max_element(pos, pos + n_rows);
  const int32_t span = max_pos + 1;
  const int32_t n_blocks = (span + bs - 1) / bs;
  const int32_t h0 = kv_head * group;
  scratch.scores.resize(static_cast<size_t>(n_rows) * group * span);
  scratch.block.resize(static_cast<size_t>(bs) * hd);
  scratch.inv_sum.resize(static_cast<size_t>(n_rows) * group);
  float* kb = scratch.block.data();
  auto scores = [&](int32_t i, int32_t g) {
    return scratch.scores.data() + (static_cast<size_t>(i) * group + g) * span;
  };

  for (int32_t b = 0; b < n_blocks; ++b) {
    const int32_t n = std::min(bs, span - b * bs);
    cache.read(block_table[b], layer, 0, kv_head, n, kb);
    for (int32_t i = 0; i < n_rows; ++i) {
      const int32_t lim = std::min(n, pos[i] + 1 - b * bs);
      for (int32_t g = 0; g < group; ++g) {
        const float* qh = q + i * row_stride + static_cast<int64_t>(h0 + g) * hd;
        float* sc = scores(i, g) + b * bs;
        for (int32_t t = 0; t < lim; ++t) {
          sc[t] = dot(qh, kb + static_cast<int64_t>(t) * hd, hd) * s.scale;
        }
      }
    }
  }
  for (int32_t i = 0; i < n_rows; ++i) {
    for (int32_t g = 0; g < group; ++g) {
      scratch.inv_sum[i * group + g] = softmax_weights(scores(i, g), pos[i] + 1);
      float* o = out + i * row_stride + static_cast<int64_t>(h0 + g) * hd;
      std::fill(o, o + hd, 0.0f);
    }
  }
  for (int32_t b = 0; b < n_blocks; ++b) {
    const int32_t n = std::min(bs, span - b * bs);
    cache.read(block_table[b], layer, 1, kv_head, n, kb);
    for (int32_t i = 0; i < n_rows; ++i) {
      const int32_t lim = std::min(n, pos[i] + 1 - b * bs);
      for (int32_t g = 0; g < group; ++g) {
        float* o = out + i * row_stride + static_cast<int64_t>(h0 + g) * hd;
        const float* w = scores(i, g) + b * bs;
        for (int32_t t = 0; t < lim; ++t) {
          const float* v = kb + static_cast<int64_t>(t) * hd;
          for (int32_t d = 0; d < hd; ++d) o[d] += w[t] * v[d];
        }
      }
    }
  }
  for (int32_t i = 0; i < n_rows; ++i) {
    for (int32_t g = 0; g < group; ++g) {
      float* o = out + i * row_stride + static_cast<int64_t>(h0 + g) * hd;
      const float inv = scratch.inv_sum[i * group + g];
      for (int32_t d = 0; d < hd; ++d) o[d] *= inv;
    }
  }
}

}  // namespace detail

void attend_rows_at(kernels::SimdLevel level, const KvCache& cache, int32_t layer,
                    const AttentionShape& s, int32_t kv_head, const float* q, const int32_t* pos,
                    int32_t n_rows, const int32_t* block_table, float* out,
                    AttentionScratch& scratch) {
  if (n_rows <= 0) return;
  if (static_cast<int>(level) > static_cast<int>(kernels::detected_simd_level())) {
    level = kernels::detected_simd_level();
  }
  switch (level) {
    case kernels::SimdLevel::Avx512:
      // Up to 8 query vectors (a decode row of a small GQA group) fill an AVX2 register; the
      // two kernels give the same bits per lane, so the choice cannot break batch invariance.
      if (static_cast<int64_t>(n_rows) * (s.n_head / std::max(1, s.n_head_kv)) <= 8) {
        return detail::attend_rows_avx2(cache, layer, s, kv_head, q, pos, n_rows, block_table, out,
                                        scratch);
      }
      return detail::attend_rows_avx512(cache, layer, s, kv_head, q, pos, n_rows, block_table, out,
                                        scratch);
    case kernels::SimdLevel::Avx2:
      return detail::attend_rows_avx2(cache, layer, s, kv_head, q, pos, n_rows, block_table, out,
                                      scratch);
    default:
      return detail::attend_rows_scalar(cache, layer, s, kv_head, q, pos, n_rows, block_table, out,
                                        scratch);
  }
}

void attend_rows(const KvCache& cache, int32_t layer, const AttentionShape& s, int32_t kv_head,
                 const float* q, const int32_t* pos, int32_t n_rows, const int32_t* block_table,
                 float* out, AttentionScratch& scratch) {
  attend_rows_at(kernels::active_simd_level(), cache, layer, s, kv_head, q, pos, n_rows,
                 block_table, out, scratch);
}

}  // namespace baton::model
