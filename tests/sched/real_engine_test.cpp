// The engine loop over the real engine and a real trained model: batching, chunking and prefix
// reuse must not change a single greedy token (docs/ARCHITECTURE.md, invariant 4).
#include <gtest/gtest.h>

#include <thread>

#include "engine/llama_engine.h"
#include "sched/engine_loop.h"
#include "sched/harness.h"
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

TEST(RealEngine, ConcurrentGreedyRequestsMatchTheirSoloRuns) {
  BATON_REQUIRE_SHARED(model, "models/stories260K.gguf");
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
      EXPECT_EQ(o.final.stats.cached_tokens, static_cast<int32_t>(ps[0].size()) - 1);
    }
  }
  EXPECT_EQ(loop.metrics().prefix_cache_hits_total, 1u);
  loop.shutdown();
}

}  // namespace
}  // namespace baton::sched
