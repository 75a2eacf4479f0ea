#include "model/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "model/attention_impl.h"
#include "model/ops.h"

namespace baton::model {
namespace {

// One block of the online softmax for one query vector qh over its lim valid keys: the same
// steps, in the same order, as online_block and pv_dims in attention_simd.inc. m and l are the
// running max and sum; o (the output accumulators) is rescaled, then gets the block's values.
void online_block(const float* qh, const float* kb, const float* vb, int32_t lim, int32_t hd,
                  float scale, float* sc, float& m, float& l, float* o) {
  float mx = -std::numeric_limits<float>::infinity();
  for (int32_t t = 0; t < lim; ++t) {
    sc[t] = fixed_order_dot(qh, kb + static_cast<int64_t>(t) * hd, hd) * scale;
    mx = std::max(mx, sc[t]);
  }
  const float m_new = std::max(m, mx);
  float sum = 0;
  for (int32_t t = 0; t < lim; ++t) {
    sc[t] = std::exp(sc[t] - m_new);
    sum += sc[t];
  }
  const float alpha = std::exp(m - m_new);
  l = l * alpha + sum;
  m = m_new;
  for (int32_t d = 0; d < hd; ++d) o[d] *= alpha;
  for (int32_t t = 0; t < lim; ++t) {
    const float* v = vb + static_cast<int64_t>(t) * hd;
    for (int32_t d = 0; d < hd; ++d) o[d] += sc[t] * v[d];
  }
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
  const int32_t first_block = window_start(s, *std::min_element(pos, pos + n_rows)) / bs;
  const int32_t h0 = kv_head * group;
  const int32_t nq = n_rows * group;
  scratch.scores.resize(bs);
  scratch.block.resize(static_cast<size_t>(bs) * hd);
  scratch.vblock.resize(static_cast<size_t>(bs) * hd);
  scratch.run_max.assign(nq, -std::numeric_limits<float>::infinity());
  scratch.run_sum.assign(nq, 0.0f);
  auto head_out = [&](int32_t i, int32_t g) {
    return out + i * row_stride + static_cast<int64_t>(h0 + g) * hd;
  };
  // Every query vector as the scores read it, once (quantized K: rounded), one after another.
  scratch.qround.resize(static_cast<size_t>(nq) * hd);
  std::vector<const float*> qv(nq);
  for (int32_t i = 0; i < n_rows; ++i) {
    for (int32_t g = 0; g < group; ++g) {
      float* tmp = scratch.qround.data() + static_cast<int64_t>(i * group + g) * hd;
      qv[i * group + g] = query_vector(cache, q, row_stride, i, h0 + g, hd, tmp, scratch.qblocks);
      std::fill(head_out(i, g), head_out(i, g) + hd, 0.0f);
    }
  }
  for (int32_t b = first_block; b < n_blocks; ++b) {
    const int32_t n = std::min(bs, span - b * bs);
    cache.read(block_table[b], layer, 0, kv_head, n, scratch.block.data());
    cache.read(block_table[b], layer, 1, kv_head, n, scratch.vblock.data());
    for (int32_t i = 0; i < n_rows; ++i) {
      // The row's keys in this block: [t0, lim). As in the SIMD paths, a block outside the row's
      // window changes nothing.
      const int32_t t0 = std::max(0, window_start(s, pos[i]) - b * bs);
      const int32_t lim = std::min(n, pos[i] + 1 - b * bs);
      if (lim <= t0) continue;
      const int64_t off = static_cast<int64_t>(t0) * hd;
      for (int32_t g = 0; g < group; ++g) {
        const int32_t v = i * group + g;
        online_block(qv[v], scratch.block.data() + off, scratch.vblock.data() + off, lim - t0, hd,
                     s.scale, scratch.scores.data(), scratch.run_max[v], scratch.run_sum[v],
                     head_out(i, g));
      }
    }
  }
  for (int32_t i = 0; i < n_rows; ++i) {
    for (int32_t g = 0; g < group; ++g) {
      float* o = head_out(i, g);
      const int32_t v = i * group + g;
      const float f = finish_scale(scratch.run_max[v], scratch.run_sum[v], s.sinks, h0 + g);
      for (int32_t d = 0; d < hd; ++d) o[d] *= f;
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
