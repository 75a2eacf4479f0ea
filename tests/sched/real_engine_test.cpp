// The engine loop over the real engine and a real trained model: batching, chunking and prefix
// reuse must not change a single greedy token (docs/ARCHITECTURE.md, invariant 4).
#include <gtest/gtest.h>

#include <cctype>
#include <string>
#include <thread>

#include "engine/llama_engine.h"
#include "sched/engine_loop.h"
#include "sched/harness.h"
#include "sched/loop_core.h"
#include "support/shared_files.h"

namespace baton::sched {
namespace {

using testing::drain_all;
using testing::greedy;
using testing::make_prompt;

constexpr int32_t kMaxTokens = 12;

// Six prompts; three share a "system prompt" so prefix reuse has something to find.
std::vector<std::vector<int32_t>> prompts(int32_t n_vocab) {
  auto system = make_prompt(40, 77, n_vocab);
  system[0] = 1;  // BOS
  std::vector<std::vector<int32_t>> out;
  for (int i = 0; i < 6; ++i) {
    std::vector<int32_t> p;
    if (i % 2 == 0) p = system;
    auto tail = make_prompt(15 + 23 * i, i, n_vocab);
    p.insert(p.end(), tail.begin(), tail.end());
    p[0] = 1;
    out.push_back(std::move(p));
  }
  return out;
}

SchedConfig small_chunks(bool prefix_cache, int32_t parallel) {
  SchedConfig c;
  c.parallel = parallel;
  c.ctx = 256;
  c.prefill_chunk = 32;  // several chunks per prompt
  c.mixed_prefill_chunk = 16;
  c.prefix_cache = prefix_cache;
  return c;
}

struct Result {
  std::vector<int32_t> tokens;
  RequestStats stats;
};

std::vector<Result> run_all(engine::Engine& eng, const SchedConfig& c,
                            const std::vector<std::vector<int32_t>>& ps) {
  EngineLoop loop(eng, c);
  loop.start();
  std::vector<Result> results(ps.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < ps.size(); ++i) {
    clients.emplace_back([&, i] {
      auto h = loop.submit(greedy(ps[i], kMaxTokens));
      auto o = drain_all(*h, std::chrono::seconds(120));
      EXPECT_TRUE(o.finished);
      EXPECT_EQ(o.final.reason, FinishReason::Length) << o.final.error;
      results[i] = {o.tokens, o.final.stats};
    });
  }
  for (auto& t : clients) t.join();
  loop.shutdown();
  return results;
}

// The model files the loop runs over: a dense trained model, and mixture-of-experts ones
// (whose rows in a step choose experts that other rows share or not; gpt-oss's windowed layers
// see only the last 16 positions of prompts longer than that).
class RealEngineModels : public ::testing::TestWithParam<const char*> {};

TEST_P(RealEngineModels, ConcurrentGreedyRequestsMatchTheirSoloRuns) {
  BATON_REQUIRE_SHARED(model, GetParam());
  engine::EngineOptions opts;
  opts.threads = 2;
  opts.kv_type = "f32";
  auto eng = engine::load_llama_engine(model.string(), opts);
  const auto ps = prompts(eng->info().n_vocab);

  // Alone: one request at a time, no prefix cache, prompt in one chunk.
  std::vector<std::vector<int32_t>> solo;
  for (const auto& p : ps) {
    SchedConfig c = small_chunks(false, 1);
    c.prefill_chunk = 2048;
    auto r = run_all(*eng, c, {p});
    solo.push_back(r[0].tokens);
    ASSERT_EQ(solo.back().size(), static_cast<size_t>(kMaxTokens));
  }
  for (bool prefix : {false, true}) {
    SCOPED_TRACE(prefix ? "prefix cache on" : "prefix cache off");
    auto batched = run_all(*eng, small_chunks(prefix, 6), ps);
    for (size_t i = 0; i < ps.size(); ++i) {
      EXPECT_EQ(batched[i].tokens, solo[i]) << "prompt " << i;
    }
  }
  // A repeated prompt reuses its cached prefix and still gives the same tokens.
  EngineLoop loop(*eng, small_chunks(true, 2));
  loop.start();
  for (int round = 0; round < 2; ++round) {
    auto h = loop.submit(greedy(ps[0], kMaxTokens));
    auto o = drain_all(*h, std::chrono::seconds(120));
    ASSERT_TRUE(o.finished);
    EXPECT_EQ(o.tokens, solo[0]);
    if (round == 1) {
      EXPECT_GT(o.final.stats.cached_tokens, 0);
      // A model with sequence state (gpt-oss's window KV) resumes only from the checkpoint at
      // the prompt's last full block; others reuse every position but the last.
      const int32_t bs = eng->info().block_size, last = static_cast<int32_t>(ps[0].size()) - 1;
      EXPECT_EQ(o.final.stats.cached_tokens,
                eng->info().state_bytes_per_seq > 0 ? last / bs * bs : last);
    }
  }
  EXPECT_EQ(loop.metrics().prefix_cache_hits_total, 1u);
  loop.shutdown();
}

INSTANTIATE_TEST_SUITE_P(Files, RealEngineModels,
                         ::testing::Values("models/stories260K.gguf",
                                           "models/arch/synth-qwen3moe-Q8_0.gguf",
                                           "models/arch/synth-qwen3moe-Q4_K_M.gguf",
                                           "models/arch/synth-gpt-oss-Q8_0.gguf",
                                           "models/arch/synth-gpt-oss-Q4_K_M.gguf"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           std::string s = i.param;
                           s = s.substr(s.rfind('/') + 1);
                           s = s.substr(0, s.find('.'));
                           for (char& c : s) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return s;
                         });

// KV pressure on the real engine: two requests that do not fit the pool together. The one
// admitted last is parked mid-decode (its blocks released to the prefix cache), resumes when the
// other ends, and produces the same tokens as when it ran alone in a large pool, greedy or
// sampled (the sampler's PRNG and penalty history survive the park).
TEST(RealEngine, RequestParkedMidDecodeMatchesItsUnparkedRun) {
  BATON_REQUIRE_SHARED(model, "models/stories260K.gguf");
  engine::EngineOptions opts;
  opts.threads = 2;
  opts.kv_type = "f32";
  auto eng = engine::load_llama_engine(model.string(), opts);
  const auto info = eng->info();
  ASSERT_GT(info.kv_bytes_per_block, 0u);
  const int64_t pool_positions =
      static_cast<int64_t>((1u << 20) / info.kv_bytes_per_block) * info.block_size;
  const int32_t n_ctx = std::min<int32_t>(info.n_ctx_train, 512);
  // Each fits alone (in a 1 MiB pool and in the context); both together do not.
  const int32_t total = static_cast<int32_t>(std::min<int64_t>(pool_positions * 7 / 10, n_ctx - 1));
  ASSERT_GT(2 * total, pool_positions) << "the model's KV blocks are too small for this test";
  auto ps = prompts(info.n_vocab);
  std::vector<GenerateRequest> reqs;
  for (int i = 0; i < 2; ++i) {
    const auto n_prompt = static_cast<int32_t>(ps[i].size());
    reqs.push_back(greedy(ps[i], total - n_prompt));
  }
  reqs[1].sampling.temperature = 0.8f;
  reqs[1].sampling.repetition_penalty = 1.2f;
  reqs[1].sampling.seed = 7;

  auto run = [&](int64_t kv_ram_mb, const std::vector<GenerateRequest>& rs) {
    SchedConfig c = small_chunks(true, 2);
    c.ctx = n_ctx;
    c.kv_ram_mb = kv_ram_mb;
    EngineLoop loop(*eng, c);
    loop.start();
    std::vector<std::shared_ptr<RequestHandle>> hs;
    for (const auto& r : rs) hs.push_back(loop.submit(r));
    std::vector<testing::Outcome> out;
    for (auto& h : hs) out.push_back(drain_all(*h, std::chrono::seconds(300)));
    loop.shutdown();
    return out;
  };
  std::vector<std::vector<int32_t>> solo;
  for (const auto& r : reqs) {
    auto o = run(64, {r});
    ASSERT_TRUE(o[0].finished);
    EXPECT_EQ(o[0].final.stats.parks, 0);
    solo.push_back(o[0].tokens);
  }
  auto both = run(1, reqs);
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(both[i].finished);
    EXPECT_EQ(both[i].final.reason, FinishReason::Length) << both[i].final.error;
    EXPECT_EQ(both[i].tokens, solo[i]) << "request " << i;
  }
  EXPECT_EQ(both[0].final.stats.parks, 0);
  EXPECT_GE(both[1].final.stats.parks, 1);
}

// Prefill preemption on the real engine, stepped by hand so the park lands where the test says:
// a long prompt parked at a chunk boundary for a short one, its blocks kept pinned or released
// to the prefix cache, gives the same tokens as its run alone.
TEST(RealEngine, PrefillParkedForAShortRequestMatchesItsUnparkedRun) {
  BATON_REQUIRE_SHARED(model, "models/stories260K.gguf");
  engine::EngineOptions opts;
  opts.threads = 2;
  opts.kv_type = "f32";
  auto eng = engine::load_llama_engine(model.string(), opts);
  const int32_t n_vocab = eng->info().n_vocab;
  auto long_prompt = make_prompt(300, 5, n_vocab);
  long_prompt[0] = 1;
  auto short_prompt = make_prompt(12, 6, n_vocab);
  short_prompt[0] = 1;
  auto run = [&](bool with_short, int64_t park_ram_mb) {
    SchedConfig c = small_chunks(true, 1);
    c.ctx = 512;
    c.preempt_min_tokens = 32;
    c.park_ram_mb = park_ram_mb;
    LoopCore core(*eng, c);
    auto big = core.submit(greedy(long_prompt, kMaxTokens));
    std::shared_ptr<RequestHandle> small;
    testing::Outcome big_out, small_out;
    for (int step = 0; step < 2000 && !(big_out.finished && (!small || small_out.finished));
         ++step) {
      if (with_short && step == 3) small = core.submit(greedy(short_prompt, kMaxTokens));
      core.step();
      testing::drain_ready(*big, big_out);
      if (small) testing::drain_ready(*small, small_out);
    }
    EXPECT_TRUE(big_out.finished);
    EXPECT_EQ(big_out.final.stats.parks, with_short ? 1 : 0);
    EXPECT_EQ(core.metrics().prefill_preemptions_total, with_short ? 1u : 0u);
    EXPECT_EQ(core.pool().used(), 0);
    return big_out.tokens;
  };
  const auto alone = run(false, 0);
  ASSERT_EQ(alone.size(), static_cast<size_t>(kMaxTokens));
  EXPECT_EQ(run(true, 256), alone) << "blocks kept pinned";
  EXPECT_EQ(run(true, 0), alone) << "blocks released to the prefix cache";
}

}  // namespace
}  // namespace baton::sched
