// The SIMD attention paths against the scalar reference, and their batch invariance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/simd.h"
#include "model/attention.h"

namespace baton::model {
namespace {

using kernels::SimdLevel;

struct AttentionCase {
  int32_t n_head, n_head_kv, head_dim, block_size;
  KvType type;
  bool f16_values = false;  // values in f16 beside keys of `type`
};

// A cache whose layer 1 holds random K/V for positions 0..n_pos-1 in shuffled blocks.
struct Fixture {
  AttentionCase c;
  KvCache cache;
  std::vector<int32_t> table;
  AttentionShape shape;

  Fixture(const AttentionCase& cs, int32_t n_pos, uint32_t seed)
      : c(cs),
        cache(cs.type, cs.f16_values ? KvType::F16 : cs.type, cs.block_size, 2, cs.n_head_kv,
              cs.head_dim) {
    const int32_t n_blocks = (n_pos + cs.block_size - 1) / cs.block_size;
    cache.allocate(n_blocks + 3);
    table.resize(n_blocks);
    std::iota(table.begin(), table.end(), 3);
    std::mt19937 rng(seed);
    std::shuffle(table.begin(), table.end(), rng);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> k(static_cast<size_t>(cs.n_head_kv) * cs.head_dim), v(k.size());
    for (int32_t p = 0; p < n_pos; ++p) {
      for (auto& x : k) x = nd(rng);
      for (auto& x : v) x = nd(rng);
      cache.write(table[p / cs.block_size], p % cs.block_size, 1, k.data(), v.data());
    }
    shape = {cs.n_head, cs.n_head_kv, cs.head_dim, 1.0f / std::sqrt(float(cs.head_dim))};
  }

  // Output of n_rows rows (n_head × head_dim floats each) for every KV head.
  std::vector<float> run(SimdLevel level, const std::vector<float>& q,
                         const std::vector<int32_t>& pos) const {
    return run(level, q, pos, shape, table);
  }
  std::vector<float> run(SimdLevel level, const std::vector<float>& q,
                         const std::vector<int32_t>& pos, const AttentionShape& sh,
                         const std::vector<int32_t>& tbl) const {
    const int32_t n_rows = static_cast<int32_t>(pos.size());
    std::vector<float> out(static_cast<size_t>(n_rows) * c.n_head * c.head_dim, -7.0f);
    AttentionScratch scratch;
    for (int32_t h = 0; h < c.n_head_kv; ++h) {
      attend_rows_at(level, cache, 1, sh, h, q.data(), pos.data(), n_rows, tbl.data(), out.data(),
                     scratch);
    }
    return out;
  }
  // The shape with a window and sink logits (null: none).
  AttentionShape windowed(int32_t window, const float* sinks) const {
    AttentionShape sh = shape;
    sh.window = window;
    sh.sinks = sinks;
    return sh;
  }
};

// Sink logits per head: ordinary ones, and every third far above any score, so that the sink
// outweighs every position and the output's rescaling by the sink runs.
std::vector<float> some_sinks(int32_t n_head) {
  std::vector<float> s(n_head);
  for (int32_t h = 0; h < n_head; ++h) s[h] = h % 3 == 2 ? 40.0f : 0.7f * float(h) - 1.0f;
  return s;
}

std::vector<float> random_q(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, scale);
  std::vector<float> q(n);
  for (auto& x : q) x = nd(rng);
  return q;
}

std::vector<int32_t> consecutive(int32_t first, int32_t n) {
  std::vector<int32_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

const AttentionCase kCases[] = {
    {8, 2, 64, 16, KvType::F16},
    {8, 2, 64, 16, KvType::F32},
    {4, 4, 8, 16, KvType::F16},
    {6, 2, 80, 7, KvType::F16},
    {3, 1, 5, 5, KvType::F32},
    {16, 2, 128, 16, KvType::F16},
    {32, 8, 64, 16, KvType::F16},
    {2, 1, 24, 3, KvType::F16},
    // Quantized caches (-ctk/-ctv q8_0, q4_0): the SIMD paths dequantize a block as the scalar
    // one does, and round the queries to q8_0 alike.
    {8, 2, 64, 16, KvType::Q8_0},
    {16, 2, 128, 16, KvType::Q4_0},
    {6, 2, 32, 7, KvType::Q8_0},
    {4, 1, 96, 16, KvType::Q4_0},
    {8, 2, 64, 16, KvType::Q8_0, true},
};

const std::vector<std::vector<int32_t>> kPositions = {
    {0}, {37}, {299}, consecutive(0, 5), consecutive(184, 16), consecutive(40, 11), {3, 250, 17},
};

bool supported(SimdLevel l) {
  return static_cast<int>(l) <= static_cast<int>(kernels::detected_simd_level());
}

class AttentionSimd : public ::testing::TestWithParam<SimdLevel> {
 protected:
  void SetUp() override {
    if (!supported(GetParam())) {
      GTEST_SKIP() << kernels::simd_level_label(GetParam()) << " is not supported by this CPU";
    }
  }
};

TEST_P(AttentionSimd, MatchesScalarReference) {
  uint32_t seed = 1;
  for (const AttentionCase& c : kCases) {
    const Fixture fx(c, 300, seed++);
    for (const auto& pos : kPositions) {
      // 12: sharp softmax, most weights underflow; scores near 100 carry rounding of ~1e-5.
      for (float q_scale : {1.0f, 12.0f}) {
        const float tol = q_scale > 1.0f ? 5e-5f : 5e-6f;
        const auto q = random_q(pos.size() * c.n_head * c.head_dim, seed++, q_scale);
        const auto want = fx.run(SimdLevel::Scalar, q, pos);
        const auto got = fx.run(GetParam(), q, pos);
        for (size_t i = 0; i < want.size(); ++i) {
          ASSERT_NEAR(got[i], want[i], tol * (1.0f + std::fabs(want[i])))
              << "head_dim " << c.head_dim << " heads " << c.n_head << "/" << c.n_head_kv
              << " block " << c.block_size << " rows " << pos.size() << " first pos " << pos[0]
              << " q_scale " << q_scale << " index " << i;
        }
      }
    }
  }
}

// Windows of one position, shorter than a block, a block, and across blocks, with and without
// sinks: every level agrees with the scalar reference.
TEST_P(AttentionSimd, WindowAndSinksMatchScalarReference) {
  uint32_t seed = 500;
  for (const AttentionCase& c : kCases) {
    const Fixture fx(c, 300, seed++);
    const auto sinks = some_sinks(c.n_head);
    for (int32_t window : {1, 5, 16, 37}) {
      for (const float* sk : {static_cast<const float*>(nullptr), sinks.data()}) {
        const AttentionShape sh = fx.windowed(window, sk);
        for (const auto& pos : kPositions) {
          const auto q = random_q(pos.size() * c.n_head * c.head_dim, seed++, 3.0f);
          const auto want = fx.run(SimdLevel::Scalar, q, pos, sh, fx.table);
          const auto got = fx.run(GetParam(), q, pos, sh, fx.table);
          for (size_t i = 0; i < want.size(); ++i) {
            ASSERT_NEAR(got[i], want[i], 2e-5f * (1.0f + std::fabs(want[i])))
                << "head_dim " << c.head_dim << " block " << c.block_size << " window " << window
                << " sinks " << (sk != nullptr) << " rows " << pos.size() << " first pos " << pos[0]
                << " index " << i;
          }
        }
      }
    }
  }
}

// A windowed row's bits do not depend on the rows beside it, whose windows start in other
// blocks (or at 0), nor on whether its chunk of lanes took the masked path.
TEST_P(AttentionSimd, WindowedRowResultIndependentOfGroup) {
  const AttentionCase cases[] = {
      {8, 2, 64, 16, KvType::F16}, {6, 2, 80, 7, KvType::F32}, {3, 1, 5, 5, KvType::F32}};
  for (const AttentionCase& c : cases) {
    const Fixture fx(c, 260, 77);
    const auto sinks = some_sinks(c.n_head);
    const int64_t row = static_cast<int64_t>(c.n_head) * c.head_dim;
    std::vector<int32_t> pos = consecutive(100, 16);
    pos.insert(pos.end(), {259, 0, 17, 30, 31, 3, 200});
    const auto q = random_q(pos.size() * row, 6, 3.0f);
    for (int32_t window : {1, 7, 16, 40}) {
      const AttentionShape sh = fx.windowed(window, window % 2 == 0 ? sinks.data() : nullptr);
      const auto together = fx.run(GetParam(), q, pos, sh, fx.table);
      for (size_t i = 0; i < pos.size(); ++i) {
        const std::vector<float> qi(q.begin() + i * row, q.begin() + (i + 1) * row);
        const auto alone = fx.run(GetParam(), qi, {pos[i]}, sh, fx.table);
        EXPECT_EQ(0, std::memcmp(alone.data(), together.data() + i * row, row * sizeof(float)))
            << "row " << i << " at position " << pos[i] << " window " << window << " head_dim "
            << c.head_dim;
      }
    }
  }
}

// A row's output is the same bits alone as in any group of rows, whatever its neighbours.
TEST_P(AttentionSimd, RowResultIndependentOfGroup) {
  const AttentionCase cases[] = {{8, 2, 64, 16, KvType::F16}, {6, 2, 80, 7, KvType::F32}};
  for (const AttentionCase& c : cases) {
    const Fixture fx(c, 260, 99);
    const int64_t row = static_cast<int64_t>(c.n_head) * c.head_dim;
    const std::vector<int32_t> pos = {100, 101, 102, 103, 104, 105, 106, 107, 108, 109,
                                      110, 111, 112, 113, 114, 115, 259, 0,   17};
    const auto q = random_q(pos.size() * row, 5, 3.0f);
    const auto together = fx.run(GetParam(), q, pos);
    for (size_t i = 0; i < pos.size(); ++i) {
      const std::vector<float> qi(q.begin() + i * row, q.begin() + (i + 1) * row);
      const auto alone = fx.run(GetParam(), qi, {pos[i]});
      EXPECT_EQ(0, std::memcmp(alone.data(), together.data() + i * row, row * sizeof(float)))
          << "row " << i << " at position " << pos[i] << " head_dim " << c.head_dim;
    }
  }
}

// Thousands of positions: the online softmax's running max and sum stay within float rounding
// of the scalar path, and a row's bits still do not depend on the rows beside it.
TEST_P(AttentionSimd, LongContextMatchesScalarAndIsRowInvariant) {
  const AttentionCase c{32, 8, 64, 16, KvType::F16};
  const Fixture fx(c, 2100, 21);
  const int64_t row = static_cast<int64_t>(c.n_head) * c.head_dim;
  std::vector<int32_t> pos = consecutive(2080, 16);
  pos.insert(pos.end(), {700, 2099, 15, 1500});
  for (float q_scale : {1.0f, 6.0f}) {
    const auto q = random_q(pos.size() * row, 31, q_scale);
    const auto want = fx.run(SimdLevel::Scalar, q, pos);
    const auto together = fx.run(GetParam(), q, pos);
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_NEAR(together[i], want[i], 2e-5f * (1.0f + std::fabs(want[i])))
          << "q_scale " << q_scale << " index " << i;
    }
    for (size_t i = 0; i < pos.size(); i += 3) {
      const std::vector<float> qi(q.begin() + i * row, q.begin() + (i + 1) * row);
      const auto alone = fx.run(GetParam(), qi, {pos[i]});
      EXPECT_EQ(0, std::memcmp(alone.data(), together.data() + i * row, row * sizeof(float)))
          << "row " << i << " at position " << pos[i];
    }
  }
}

// Fills a one-KV-head F32 cache of 16-position blocks (table gives each block's place) with
// n_pos random keys of hd floats (returned) and V[p] = e_p (hd >= n_pos), so that attention's
// output is its softmax weights.
std::vector<float> one_hot_values(KvCache& cache, const std::vector<int32_t>& table, int32_t n_pos,
                                  int32_t hd, uint32_t seed) {
  cache.allocate(static_cast<int32_t>(table.size()));
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> keys(static_cast<size_t>(n_pos) * hd), v(hd);
  for (auto& x : keys) x = nd(rng);
  for (int32_t p = 0; p < n_pos; ++p) {
    std::fill(v.begin(), v.end(), 0.0f);
    v[p] = 1.0f;
    cache.write(table[p / 16], p % 16, 0, keys.data() + p * hd, v.data());
  }
  return keys;
}

// With V[p] = the unit vector e_p, the output row is the softmax weights themselves; they must
// match a double-precision softmax to a few ulp (this checks the polynomial exp directly).
TEST_P(AttentionSimd, WeightsMatchDoubleSoftmax) {
  const int32_t hd = 64, n_pos = 60, n_head = 4;
  KvCache cache(KvType::F32, 16, 1, 1, hd);
  const std::vector<int32_t> table = {2, 0, 3, 1};
  const auto keys = one_hot_values(cache, table, n_pos, hd, 11);
  const AttentionShape shape{n_head, 1, hd, 0.125f};
  const auto pos = consecutive(44, 16);
  const auto q = random_q(pos.size() * n_head * hd, 4, 2.0f);
  std::vector<float> out(q.size());
  AttentionScratch scratch;
  attend_rows_at(GetParam(), cache, 0, shape, 0, q.data(), pos.data(), 16, table.data(), out.data(),
                 scratch);
  for (size_t r = 0; r < q.size() / hd; ++r) {
    const float* qr = q.data() + r * hd;
    const int32_t last = pos[r / n_head];
    std::vector<double> e(last + 1);
    double mx = -1e300, sum = 0;
    for (int32_t p = 0; p <= last; ++p) {
      double dot = 0;
      for (int32_t d = 0; d < hd; ++d) dot += double(qr[d]) * keys[p * hd + d];
      mx = std::max(mx, e[p] = dot * 0.125);
    }
    for (auto& x : e) sum += x = std::exp(x - mx);
    for (int32_t p = 0; p < hd; ++p) {
      const double want = p <= last ? e[p] / sum : 0.0;
      ASSERT_NEAR(out[r * hd + p], want, 1e-5 * want + 1e-30) << "head row " << r << " p " << p;
    }
  }
}

// With V[p] = e_p the output is the weights: positions outside the window get exactly 0, and a
// sink's share of the denominator leaves the rest summing to 1 / (1 + e^(sink - m) / sum).
// Checked against a double-precision softmax at every level, scalar included.
TEST(AttentionWindow, WeightsMatchDoubleSoftmaxWithWindowAndSink) {
  const int32_t hd = 64, n_pos = 60, n_head = 4, window = 21;
  KvCache cache(KvType::F32, 16, 1, 1, hd);
  const std::vector<int32_t> table = {2, 0, 3, 1};
  const auto keys = one_hot_values(cache, table, n_pos, hd, 12);
  const std::vector<float> sinks = {0.5f, -2.0f, 3.0f, 30.0f};
  AttentionShape shape{n_head, 1, hd, 0.125f};
  shape.window = window;
  shape.sinks = sinks.data();
  std::vector<int32_t> pos = consecutive(44, 16);
  pos[3] = 5;  // a row whose window starts at 0
  const auto q = random_q(pos.size() * n_head * hd, 4, 2.0f);
  for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512}) {
    if (!supported(level)) continue;
    std::vector<float> out(q.size());
    AttentionScratch scratch;
    attend_rows_at(level, cache, 0, shape, 0, q.data(), pos.data(), 16, table.data(), out.data(),
                   scratch);
    for (size_t r = 0; r < q.size() / hd; ++r) {
      const float* qr = q.data() + r * hd;
      const int32_t last = pos[r / n_head], first = std::max(0, last - window + 1);
      std::vector<double> e(n_pos, 0.0);
      double mx = sinks[r % n_head], sum = 0;
      for (int32_t p = first; p <= last; ++p) {
        double dot = 0;
        for (int32_t d = 0; d < hd; ++d) dot += double(qr[d]) * keys[p * hd + d];
        mx = std::max(mx, e[p] = dot * 0.125);
      }
      for (int32_t p = first; p <= last; ++p) sum += e[p] = std::exp(e[p] - mx);
      sum += std::exp(sinks[r % n_head] - mx);
      for (int32_t p = 0; p < hd; ++p) {
        const double want = p >= first && p <= last ? e[p] / sum : 0.0;
        if (want == 0.0) {
          ASSERT_EQ(out[r * hd + p], 0.0f) << kernels::simd_level_label(level) << " row " << r;
        } else {
          ASSERT_NEAR(out[r * hd + p], want, 2e-5 * want + 1e-30)
              << kernels::simd_level_label(level) << " head row " << r << " p " << p;
        }
      }
    }
  }
}

// Blocks wholly before every row's window are never read: their block-table entries point far
// outside the cache, where a read would fault. (A window's cost is the window, whatever the
// context; the entries of those blocks may later be freed.)
TEST(AttentionWindow, BlocksBeforeEveryWindowAreNotRead) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const AttentionCase c{8, 2, 64, 16, KvType::F16};
  const Fixture fx(c, 300, 9);
  const int32_t window = 20;
  std::vector<int32_t> pos = consecutive(280, 16);
  pos.push_back(250);  // the earliest window: 231..250, from block 14
  auto table = fx.table;
  for (int32_t b = 0; b < 231 / c.block_size; ++b) table[b] = 1 << 30;
  const auto q = random_q(pos.size() * c.n_head * c.head_dim, 3, 1.0f);
  for (SimdLevel level : {SimdLevel::Scalar, SimdLevel::Avx2, SimdLevel::Avx512}) {
    if (!supported(level)) continue;
    EXPECT_EXIT(
        {
          const auto out = fx.run(level, q, pos, fx.windowed(window, nullptr), table);
          std::exit(std::isfinite(out[0]) ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "")
        << kernels::simd_level_label(level);
  }
}

INSTANTIATE_TEST_SUITE_P(Levels, AttentionSimd,
                         ::testing::Values(SimdLevel::Avx2, SimdLevel::Avx512),
                         [](const auto& info) {
                           return std::string(info.param == SimdLevel::Avx2 ? "avx2" : "avx512");
                         });

TEST(AttentionSimd, AvxLevelsGiveTheSameBits) {
  if (!supported(SimdLevel::Avx512)) GTEST_SKIP() << "avx512 is not supported by this CPU";
  const AttentionCase c{8, 2, 64, 16, KvType::F16};
  const Fixture fx(c, 200, 3);
  const auto pos = consecutive(150, 16);
  const auto q = random_q(pos.size() * c.n_head * c.head_dim, 8, 2.0f);
  const auto a = fx.run(SimdLevel::Avx2, q, pos), b = fx.run(SimdLevel::Avx512, q, pos);
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)));
}

}  // namespace
}  // namespace baton::model
