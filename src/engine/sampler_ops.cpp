#include "engine/sampler_ops.h"

#include <algorithm>

// The vocabulary-wide passes are built for three instruction sets and picked once at load
// time. Every lane does the same IEEE operations in the same order (no FMA: -ffp-contract=off),
// so each build returns the same bits and the scalar weight() calls elsewhere agree with them.
// Sanitizer builds take the default build only: ThreadSanitizer's runtime is not ready when
// the dynamic loader runs the clones' ifunc resolver, and the process dies before main.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define BATON_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define BATON_SANITIZED 1
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(BATON_SANITIZED)
#define BATON_SAMPLER_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define BATON_SAMPLER_CLONES
#endif

namespace baton::engine::sampler_ops {
namespace {

constexpr int32_t kLanes = 16;
// Tokens per max test: top_k and gather skip a chunk whose largest logit cannot matter.
constexpr int32_t kChunk = 64;

// The largest logit of a full chunk, NaN ignored (`x > m` fails for it). Independent lanes so
// the compiler emits vector max instructions, which treat NaN the same way.
float chunk_max(const float* p) {
  float m[kLanes];
  for (int32_t j = 0; j < kLanes; ++j) m[j] = kNegInf;
  for (int32_t c = 0; c < kChunk; c += kLanes) {
    for (int32_t j = 0; j < kLanes; ++j) m[j] = p[c + j] > m[j] ? p[c + j] : m[j];
  }
  float r = m[0];
  for (int32_t j = 1; j < kLanes; ++j) r = m[j] > r ? m[j] : r;
  return r;
}

float range_max(const float* p, int32_t len) {
  if (len == kChunk) return chunk_max(p);
  float r = kNegInf;
  for (int32_t i = 0; i < len; ++i) r = p[i] > r ? p[i] : r;
  return r;
}

}  // namespace

BATON_SAMPLER_CLONES Best argmax(const float* l, int32_t n) {
  float best = kNegInf;
  int32_t at = -1;  // the first chunk holding best: a later chunk must beat it strictly
  for (int32_t b = 0; b < n; b += kChunk) {
    const float m = range_max(l + b, std::min(kChunk, n - b));
    if (m > best) {
      best = m;
      at = b;
    }
  }
  if (at < 0) return {kNegInf, 0};
  while (!(l[at] == best)) ++at;
  return {best, at};
}

BATON_SAMPLER_CLONES double exp_sum(const float* l, int32_t n, float mx, float inv_t,
                                    double* block_sums) {
  double total = 0;
  float w[kBlock];
  for (int32_t b = 0, k = 0; b < n; b += kBlock, ++k) {
    const int32_t len = std::min(kBlock, n - b);
    // Weights first, sums second: two plain loops the compiler vectorises.
    for (int32_t i = 0; i < len; ++i) w[i] = weight(l[b + i], mx, inv_t);
    float acc[kLanes] = {};
    int32_t i = 0;
    for (; i + kLanes <= len; i += kLanes) {
      for (int32_t j = 0; j < kLanes; ++j) acc[j] += w[i + j];
    }
    float s = 0;
    for (int32_t j = 0; j < kLanes; ++j) s += acc[j];
    for (; i < len; ++i) s += w[i];
    if (block_sums) block_sums[k] = s;
    total += s;
  }
  return total;
}

int32_t draw_by_blocks(const float* l, int32_t n, float mx, float inv_t, const double* block_sums,
                       double target) {
  const int32_t n_blocks = (n + kBlock - 1) / kBlock;
  double cum = 0;
  int32_t k = 0;
  for (; k + 1 < n_blocks && !(target < cum + block_sums[k]); ++k) cum += block_sums[k];
  // Within the block the weights are summed one by one, which may round a little differently
  // from the block's sum: a target past the end takes the block's last drawable token.
  int32_t last = -1;
  for (int32_t i = k * kBlock; i < std::min(n, (k + 1) * kBlock); ++i) {
    const float w = weight(l[i], mx, inv_t);
    if (w > 0.0f) {
      last = i;
      cum += w;
      if (target < cum) return i;
    }
  }
  return last;
}

BATON_SAMPLER_CLONES void top_k(const float* l, int32_t n, int32_t k, bool keep_neg_inf,
                                std::vector<Item>& out) {
  out.clear();
  if (k <= 0) return;
  int32_t i = 0;
  for (; i < n && static_cast<int32_t>(out.size()) < k; ++i) {
    if (l[i] > kNegInf) {
      out.push_back({l[i], i, 0});
    } else if (keep_neg_inf) {
      out.push_back({kNegInf, i, 0});
    }
  }
  // A heap with the worst kept token in front. Tokens come in id order, so a later token enters
  // only by beating it strictly (on a tie the lower id, already kept, wins).
  std::make_heap(out.begin(), out.end(), better);
  const auto offer = [&](int32_t j) {
    if (l[j] > out.front().value) {
      std::pop_heap(out.begin(), out.end(), better);
      out.back() = {l[j], j, 0};
      std::push_heap(out.begin(), out.end(), better);
    }
  };
  if (static_cast<int32_t>(out.size()) == k) {
    for (; i < n && i % kChunk != 0; ++i) offer(i);
    for (; i + kChunk <= n; i += kChunk) {
      if (!(chunk_max(l + i) > out.front().value)) continue;
      for (int32_t j = i; j < i + kChunk; ++j) offer(j);
    }
    for (; i < n; ++i) offer(i);
  }
  std::sort_heap(out.begin(), out.end(), better);
}

BATON_SAMPLER_CLONES void gather(const float* l, int32_t n, float lo, float hi, Head& head) {
  // Branch-free: every token is written at the end, and the end moves past it when it is in the
  // band (half the tokens of a wide band would mispredict a branch). head has room for n + 1.
  size_t end = head.size;
  float* v = head.v.data();
  int32_t* id = head.id.data();
  const auto take = [&](int32_t b, int32_t e) {
    for (int32_t i = b; i < e; ++i) {
      v[end] = l[i];
      id[end] = i;
      end += (l[i] >= lo) & (l[i] < hi);
    }
  };
  int32_t i = 0;
  for (; i + kChunk <= n; i += kChunk) {
    if (chunk_max(l + i) >= lo) take(i, i + kChunk);
  }
  take(i, n);
  head.size = end;
}

BATON_SAMPLER_CLONES void weigh(Head& head, size_t b, size_t e, float mx, float inv_t) {
  const float* v = head.v.data();
  float* w = head.w.data();
  for (size_t i = b; i < e; ++i) w[i] = weight(v[i], mx, inv_t);
}

size_t nucleus(std::vector<Item>& items, double target) {
  // Weighted quickselect: [0, lo) is in, the answer's size lies in (lo, hi], and [hi, end) is
  // worse than everything before it. Halving costs O(n) in all, instead of a sort.
  if (items.empty()) return 0;
  size_t lo = 0, hi = items.size();
  double mass = 0;  // of [0, lo)
  const auto first = items.begin();
  while (hi - lo > 32) {
    const size_t mid = lo + (hi - lo) / 2;
    std::nth_element(first + lo, first + mid, first + hi, better);
    double m = 0;
    for (size_t i = lo; i < mid; ++i) m += items[i].w;
    if (mass + m >= target) {
      hi = mid;
    } else {
      mass += m;
      lo = mid;
    }
  }
  std::sort(first + lo, first + hi, better);
  for (size_t i = lo; i < hi; ++i) {
    mass += items[i].w;
    if (mass >= target) return i + 1;
  }
  return hi;
}

}  // namespace baton::engine::sampler_ops
