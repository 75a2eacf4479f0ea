// Quantized KV storage (-ctk / -ctv q8_0, q4_0): the bytes a block takes, what a write then a
// read gives back, mixed key and value types, and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/quantize.h"
#include "model/attention.h"
#include "model/kv_cache.h"

namespace baton::model {
namespace {

std::vector<float> normal(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = nd(rng);
  return v;
}

TEST(KvCacheQuant, BlockBytesFollowTheTypes) {
  // 2 layers x 4 KV heads x 16 slots, head dim 128: a q8_0 row is 4 blocks of 34 bytes, q4_0 4
  // of 18, f16 256 bytes.
  const uint64_t rows = 2 * 4 * 16;
  EXPECT_EQ(KvCache(KvType::F16, 16, 2, 4, 128).bytes_per_block(), rows * 2 * 256);
  EXPECT_EQ(KvCache(KvType::Q8_0, 16, 2, 4, 128).bytes_per_block(), rows * 2 * 136);
  EXPECT_EQ(KvCache(KvType::Q4_0, 16, 2, 4, 128).bytes_per_block(), rows * 2 * 72);
  EXPECT_EQ(KvCache(KvType::Q8_0, KvType::F16, 16, 2, 4, 128).bytes_per_block(),
            rows * (136 + 256));
}

TEST(KvCacheQuant, ReadGivesTheDequantizedLevelsOfWhatWasWritten) {
  for (const auto [k, v] :
       {std::pair{KvType::Q8_0, KvType::Q8_0}, std::pair{KvType::Q4_0, KvType::Q4_0},
        std::pair{KvType::Q8_0, KvType::F16}, std::pair{KvType::F32, KvType::Q4_0}}) {
    const int32_t heads = 2, hd = 64, bs = 8;
    KvCache cache(k, v, bs, 3, heads, hd);
    cache.allocate(4);
    std::vector<std::vector<float>> keys, values;
    for (int32_t slot = 0; slot < bs; ++slot) {
      keys.push_back(normal(heads * hd, 10 + slot, 3.0f));
      values.push_back(normal(heads * hd, 50 + slot));
      cache.write(2, slot, 1, keys.back().data(), values.back().data());
    }
    for (int32_t kv = 0; kv < 2; ++kv) {
      const KvType t = cache.type(kv);
      for (int32_t h = 0; h < heads; ++h) {
        std::vector<float> got(static_cast<size_t>(bs) * hd);
        cache.read(2, 1, kv, h, bs, got.data());
        for (int32_t slot = 0; slot < bs; ++slot) {
          const float* src = (kv == 0 ? keys : values)[slot].data() + h * hd;
          std::vector<float> want(src, src + hd);
          if (kv_type_is_quantized(t)) {
            const auto tt = t == KvType::Q8_0 ? gguf::TensorType::Q8_0 : gguf::TensorType::Q4_0;
            std::vector<uint8_t> blocks(kernels::kernel_row_bytes(tt, hd));
            kernels::quantize_row(tt, src, blocks.data(), hd);
            kernels::dequantize_row(tt, blocks.data(), want.data(), hd);
          }
          for (int32_t d = 0; d < hd; ++d) {
            const float got_d = got[slot * hd + d];
            if (t == KvType::F16) {
              ASSERT_NEAR(got_d, src[d], std::fabs(src[d]) * 1e-3f);
            } else {
              ASSERT_EQ(got_d, want[d]) << kv_type_name(t) << " slot " << slot << " d " << d;
            }
            // q4_0 keeps 16 levels of the block's extreme: within half a level of the value.
            if (t == KvType::Q4_0) ASSERT_NEAR(got_d, src[d], 3.0f * 4.0f / 8.0f * 1.5f);
          }
        }
      }
    }
    // A block copied keeps every byte of its first slots.
    cache.copy_block(2, 0, 5);
    std::vector<float> a(5 * hd), b(5 * hd);
    cache.read(2, 1, 1, 1, 5, a.data());
    cache.read(0, 1, 1, 1, 5, b.data());
    EXPECT_EQ(a, b);
  }
}

TEST(KvCacheQuant, AQuantizedTypeNeedsHeadDimsOf32) {
  try {
    KvCache cache(KvType::Q8_0, KvType::F16, 16, 2, 4, 8);
    ADD_FAILURE() << "q8_0 keys accepted with head dim 8";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--cache-type-k q8_0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("head dim is 8"), std::string::npos) << e.what();
  }
  EXPECT_THROW(KvCache(KvType::F16, KvType::Q4_0, 16, 2, 4, 48), std::runtime_error);
  EXPECT_NO_THROW(KvCache(KvType::F16, KvType::F32, 16, 2, 4, 8));
}

TEST(KvCacheQuant, TypeNames) {
  EXPECT_EQ(kv_type_from_name("q8_0"), KvType::Q8_0);
  EXPECT_EQ(kv_type_from_name("Q4_0"), KvType::Q4_0);
  EXPECT_EQ(kv_type_from_name("f16"), KvType::F16);
  EXPECT_FALSE(kv_type_from_name("q8"));
  EXPECT_FALSE(kv_type_from_name(""));
  EXPECT_EQ(kv_type_names(), "f16, f32, q8_0, q4_0");
}

// The scores of quantized keys are taken against the query rounded to q8_0, as llama.cpp does:
// the output is the softmax of those dot products over the dequantized keys, weighting the
// dequantized values (checked in double at every level).
TEST(KvCacheQuant, AttentionOverQuantizedKvMatchesItsDoubleDefinition) {
  const int32_t hd = 64, n_pos = 40, bs = 16;
  for (const KvType t : {KvType::Q8_0, KvType::Q4_0}) {
    KvCache cache(t, bs, 1, 1, hd);
    cache.allocate(3);
    const std::vector<int32_t> table = {1, 2, 0};
    for (int32_t p = 0; p < n_pos; ++p) {
      const auto k = normal(hd, 100 + p), v = normal(hd, 200 + p);
      cache.write(table[p / bs], p % bs, 0, k.data(), v.data());
    }
    std::vector<float> keys(n_pos * hd), vals(n_pos * hd);
    for (int32_t b = 0; b < 3; ++b) {
      const int32_t n = std::min(bs, n_pos - b * bs);
      cache.read(table[b], 0, 0, 0, n, keys.data() + b * bs * hd);
      cache.read(table[b], 0, 1, 0, n, vals.data() + b * bs * hd);
    }
    const auto q = normal(hd, 7, 2.0f);
    std::vector<uint8_t> qb(kernels::kernel_row_bytes(gguf::TensorType::Q8_0, hd));
    std::vector<float> qr(hd);
    kernels::quantize_row(gguf::TensorType::Q8_0, q.data(), qb.data(), hd);
    kernels::dequantize_row(gguf::TensorType::Q8_0, qb.data(), qr.data(), hd);
    std::vector<double> w(n_pos);
    double mx = -1e300, sum = 0;
    for (int32_t p = 0; p < n_pos; ++p) {
      double dot = 0;
      for (int32_t d = 0; d < hd; ++d) dot += double(qr[d]) * keys[p * hd + d];
      mx = std::max(mx, w[p] = dot / 8.0);
    }
    for (auto& x : w) sum += x = std::exp(x - mx);
    const AttentionShape shape{1, 1, hd, 0.125f};
    const int32_t pos = n_pos - 1;
    for (const auto level :
         {kernels::SimdLevel::Scalar, kernels::SimdLevel::Avx2, kernels::SimdLevel::Avx512}) {
      std::vector<float> out(hd);
      AttentionScratch scratch;
      attend_rows_at(level, cache, 0, shape, 0, q.data(), &pos, 1, table.data(), out.data(),
                     scratch);
      for (int32_t d = 0; d < hd; ++d) {
        double want = 0;
        for (int32_t p = 0; p < n_pos; ++p) want += w[p] / sum * vals[p * hd + d];
        ASSERT_NEAR(out[d], want, 2e-5) << kv_type_name(t) << " level " << int(level) << " d " << d;
      }
    }
  }
}

}  // namespace
}  // namespace baton::model
