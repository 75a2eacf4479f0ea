// The exactness anchor: the real stories260K model against the golden greedy output computed
// by an independent float64 forward pass (see ../shared/models/PROVENANCE.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>

#include "engine/generate.h"
#include "engine/llama_engine.h"
#include "invariance.h"
#include "support/shared_files.h"

namespace baton {
namespace {

const std::vector<int32_t> kGolden = {403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421,
                                      395, 317, 426, 338, 401, 396, 267, 337, 410, 408, 419, 292,
                                      411, 322, 265, 282, 295, 433, 426, 385, 328, 432, 358, 394,
                                      261, 370, 432, 352, 266, 268, 388, 426, 338, 391, 266, 267,
                                      337, 335, 312, 432, 398, 312, 286, 267, 414, 270, 333, 415};

engine::GenerateOptions greedy(int n) {
  engine::GenerateOptions o;
  o.max_tokens = n;
  o.sampling.temperature = 0;
  return o;
}

TEST(Stories260K, TopLogitsAndGoldenGreedyIds) {
  BATON_REQUIRE_SHARED(path, "models/stories260K.gguf");
  engine::EngineOptions opts;
  opts.threads = 2;
  auto eng = engine::load_llama_engine(path.string(), opts);
  EXPECT_EQ(eng->info().n_vocab, 512);
  EXPECT_EQ(eng->info().bos_id, 1);
  auto res = engine::generate(*eng, {1}, greedy(60));
  const auto& l = res.first_logits;
  std::vector<int32_t> idx(l.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::partial_sort(idx.begin(), idx.begin() + 5, idx.end(),
                    [&](int32_t a, int32_t b) { return l[a] > l[b]; });
  const std::array<int32_t, 5> ids = {403, 385, 410, 317, 407};
  const std::array<float, 5> vals = {17.0235f, 15.4062f, 13.1083f, 12.7692f, 12.4181f};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(idx[i], ids[i]) << "rank " << i;
    EXPECT_NEAR(l[ids[i]], vals[i], 1e-3) << "id " << ids[i];
  }
  EXPECT_EQ(res.tokens, kGolden);
  EXPECT_EQ(eng->tokenizer().decode(res.tokens).substr(0, 34),
            "Once upon a time, there was a litt");
}

TEST(Stories260K, F32KvGivesTheSameGreedyIds) {
  BATON_REQUIRE_SHARED(path, "models/stories260K.gguf");
  engine::EngineOptions opts;
  opts.threads = 1;
  opts.kv_type = "f32";
  opts.block_size = 7;  // an odd block size walks block edges differently
  auto eng = engine::load_llama_engine(path.string(), opts);
  EXPECT_EQ(engine::generate(*eng, {1}, greedy(60)).tokens, kGolden);
}

TEST(Stories260K, BatchAndChunkInvariant) {
  BATON_REQUIRE_SHARED(path, "models/stories260K.gguf");
  engine::EngineOptions opts;
  opts.threads = 2;
  auto eng = engine::load_llama_engine(path.string(), opts);
  eng->allocate_kv(4096);
  std::vector<int32_t> prompt = {1};
  prompt.insert(prompt.end(), kGolden.begin(), kGolden.end());
  prompt.resize(70, 300);
  testing::BlockAllocator alloc;
  const auto ref = testing::run_target(*eng, prompt, 0, 0, alloc, 1);
  ASSERT_EQ(ref.size(), 512u);
  uint32_t seed = 2;
  for (int chunk : {1, 7, 64, 0}) {
    for (int others : {0, 1, 3, 8}) {
      testing::BlockAllocator fresh(alloc.used());
      auto got = testing::run_target(*eng, prompt, chunk, others, fresh, seed++);
      EXPECT_TRUE(testing::bit_identical(ref, got)) << "chunk " << chunk << " others " << others;
    }
  }
}

TEST(Stories260K, BinaryRunJsonGivesGoldenIds) {
  BATON_REQUIRE_BINARY();
  BATON_REQUIRE_SHARED(path, "models/stories260K.gguf");
  const std::string cmd = testing::baton_binary() + " run -m '" + path.string() +
                          "' -n 60 --temp 0 --threads 2 --json 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ASSERT_EQ(pclose(p), 0) << out;
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["tokens"].get<std::vector<int32_t>>(), kGolden);
  EXPECT_EQ(j["prompt_tokens"].get<int>(), 1);
  EXPECT_EQ(j["text"].get<std::string>().substr(0, 16), "Once upon a time");
  EXPECT_GT(j["timings"]["gen_tok_s"].get<double>(), 0);
}

}  // namespace
}  // namespace baton
