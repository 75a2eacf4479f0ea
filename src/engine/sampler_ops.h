#pragma once
// The sampler's vocabulary-wide passes. They run on the engine-loop thread for every decode row,
// so each is one streaming pass written in fixed-width lanes (the compiler vectorises those
// without -ffast-math) and sums in a fixed order, so every result is the same run to run.
// Logits are read as given: a NaN counts as -inf everywhere, because every test below is an
// ordered comparison, which NaN fails.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace baton::engine::sampler_ops {

inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();
inline constexpr int32_t kBlock = 256;  // tokens per partial sum of a whole-vocabulary draw

struct Item {
  float value = 0;  // the (effective) logit
  int32_t id = 0;
  float w = 0;  // its weight, once computed
};

// The sampler's order: higher logit first, the lower id on a tie, so truncation is reproducible.
inline bool better(const Item& a, const Item& b) {
  return a.value != b.value ? a.value > b.value : a.id < b.id;
}

// e^x for x <= 0 in float (within 2 ulp of e^x), 0 for x < -87, -inf and NaN; positive x counts
// as 0. Plain arithmetic in one expression, so the compiler vectorises the loops that call it
// and a vectorised call returns the same bits as a scalar one.
inline float exp_neg(float x) {
  const bool live = x >= -87.0f;
  const float xc = live ? (x < 0.0f ? x : 0.0f) : -87.0f;
  // x = n ln2 + r with |r| <= ln2 / 2: n rounded by the 1.5 * 2^23 trick, ln2 split in two so
  // r is exact; e^r by Cephes' expf polynomial; 2^n written into the exponent bits.
  const float t = xc * 1.44269504088896341f + 12582912.0f;
  const int32_t n = std::bit_cast<int32_t>(t) - 0x4B400000;
  const float fn = t - 12582912.0f;
  const float r = (xc - fn * 0.693359375f) - fn * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e = (p * (r * r) + r) + 1.0f;
  return live ? e * std::bit_cast<float>((n + 127) << 23) : 0.0f;
}

// The weight of logit x at temperature 1 / inv_t relative to the largest logit mx (x <= mx).
// x == mx gives 1 even when inv_t is infinite (a temperature so small its inverse overflowed).
inline float weight(float x, float mx, float inv_t) {
  const float d = x - mx;
  return exp_neg(d < 0.0f ? d * inv_t : d);
}

struct Best {
  float value;
  int32_t id;
};
// The largest logit and the lowest id holding it; {-inf, 0} when every logit is -inf or NaN.
Best argmax(const float* l, int32_t n);

// Σ weight(l[i], mx, inv_t), summed in float within blocks of kBlock and in double across them;
// block_sums (kBlock-sized blocks, ceil(n / kBlock) of them) receives each block's sum.
double exp_sum(const float* l, int32_t n, float mx, float inv_t, double* block_sums);

// The id where the running sum of weights, in id order, first passes target (0 <= target < the
// sum of block_sums); block_sums as exp_sum filled them for the same l, mx and inv_t.
int32_t draw_by_blocks(const float* l, int32_t n, float mx, float inv_t, const double* block_sums,
                       double target);

// The k best tokens (see better), best first, w unset. -inf and NaN logits are left out unless
// keep_neg_inf (then a NaN reads as -inf). out is reused: cleared, not shrunk.
void top_k(const float* l, int32_t n, int32_t k, bool keep_neg_inf, std::vector<Item>& out);

// Candidates of a truncated draw, one array per field so the weight pass vectorises. The arrays
// only grow (to the vocabulary plus one), so a thread's calls stop allocating.
struct Head {
  std::vector<float> v;
  std::vector<int32_t> id;
  std::vector<float> w;
  size_t size = 0;
  void clear_for(int32_t n_vocab) {
    const size_t cap = static_cast<size_t>(n_vocab) + 1;
    if (v.size() < cap) v.resize(cap), id.resize(cap), w.resize(cap);
    size = 0;
  }
  void push(float value, int32_t token, float weight_) {
    v[size] = value, id[size] = token, w[size] = weight_, ++size;
  }
};

// Appends every token with lo <= l[i] < hi, in id order (w unset); head.clear_for(n) first.
void gather(const float* l, int32_t n, float lo, float hi, Head& head);

// head.w[b, e) = weight(head.v[i], mx, inv_t).
void weigh(Head& head, size_t b, size_t e, float mx, float inv_t);

// Reorders items so the smallest set of the best (see better) whose weights sum to at least
// target comes first, and returns its size (at least 1; all of them when their sum is below).
size_t nucleus(std::vector<Item>& items, double target);

}  // namespace baton::engine::sampler_ops
