// The engine loop over hybrid recurrent models: a request's recurrent state covers its whole
// prefix and cannot be cut back to a block, so no request may restore a cached prefix it has no
// state for. Until states are checkpointed with the blocks, the loop turns prefix reuse (RAM
// and disk) off for such a model; answers stay exact through resends and parking.
#include <gtest/gtest.h>

#include <thread>

#include "engine/fake_engine.h"
#include "engine/llama_engine.h"
#include "sched/driver.h"
#include "sched/engine_loop.h"
#include "sched/harness.h"
#include "sched/loop_core.h"
#include "support/shared_files.h"

namespace baton::sched {
namespace {

using engine::FakeEngine;
using testing::Driver;
using testing::greedy;
using testing::make_prompt;

engine::FakeEngineConfig recurrent_fake() {
  engine::FakeEngineConfig e = testing::small_blocks();
  e.recurrent = true;
  return e;
}

SchedConfig config() {
  SchedConfig c;
  c.parallel = 2;
  c.ctx = 1024;
  c.prefill_chunk = 64;
  c.mixed_prefill_chunk = 16;
  return c;
}

// An agent's second turn resends the first turn's prompt and answer with more text after it.
std::vector<int32_t> next_turn(std::vector<int32_t> prompt, const std::vector<int32_t>& answer,
                               int32_t salt) {
  prompt.insert(prompt.end(), answer.begin(), answer.end());
  const auto more = make_prompt(37, salt);
  prompt.insert(prompt.end(), more.begin(), more.end());
  return prompt;
}

// The recurrent fake fails any step that continues a request from a position its state does not
// hold: a restored prefix would fail the second turn. With the guard, it computes the whole
// conversation again and gets the reference tokens.
TEST(HybridLoop, ResentConversationComputesItsWholePromptAndGetsTheSameTokens) {
  FakeEngine eng(recurrent_fake());
  LoopCore core(eng, config());
  EXPECT_FALSE(core.config().prefix_cache);
  Driver d(core);
  const auto first = make_prompt(100, 1);
  const uint64_t a = d.submit(greedy(first, 20));
  ASSERT_TRUE(d.run_until_done());
  ASSERT_EQ(d.out[a].final.reason, FinishReason::Length) << d.out[a].final.error;
  EXPECT_EQ(d.out[a].tokens, eng.reference(first, 20, true));
  const auto second = next_turn(first, d.out[a].tokens, 2);
  const uint64_t b = d.submit(greedy(second, 20));
  // The same conversation twice at once, and its first turn again.
  const uint64_t c = d.submit(greedy(second, 20));
  const uint64_t again = d.submit(greedy(first, 20));
  ASSERT_TRUE(d.run_until_done());
  for (uint64_t id : {b, c}) {
    EXPECT_EQ(d.out[id].final.reason, FinishReason::Length) << d.out[id].final.error;
    EXPECT_EQ(d.out[id].tokens, eng.reference(second, 20, true)) << "request " << id;
    EXPECT_EQ(d.out[id].final.stats.cached_tokens, 0);
  }
  EXPECT_EQ(d.out[again].tokens, d.out[a].tokens);
  // Every prompt token was computed: the prefill counts are the prompts.
  const Metrics m = core.metrics();
  EXPECT_EQ(m.prefill_tokens_total, 2 * first.size() + 2 * second.size());
  EXPECT_EQ(m.prefix_cache_queries_total, 0u);
  EXPECT_EQ(m.requests_total.at("failed"), 0u);
  EXPECT_EQ(eng.live_states(), 0u) << "every finished request's state is released";
  EXPECT_EQ(testing::check_invariants(eng.steps(), d.prompt_len), "");
}

// The same conversation on a model without recurrent state reuses the first turn's blocks: the
// guard is what makes the hybrid compute them again.
TEST(HybridLoop, APlainModelReusesThePrefixTheHybridRecomputes) {
  FakeEngine eng(testing::small_blocks());
  LoopCore core(eng, config());
  EXPECT_TRUE(core.config().prefix_cache);
  Driver d(core);
  const auto first = make_prompt(100, 1);
  const uint64_t a = d.submit(greedy(first, 20));
  ASSERT_TRUE(d.run_until_done());
  const uint64_t b = d.submit(greedy(next_turn(first, d.out[a].tokens, 2), 20));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_GE(d.out[b].final.stats.cached_tokens, 112);
}

// --kv-disk-dir with a hybrid model: the tier stays off (it would restore prefixes), the server
// starts.
TEST(HybridLoop, DiskTierStaysOff) {
  FakeEngine eng(recurrent_fake());
  SchedConfig c = config();
  c.kv_disk_dir = (baton::testing::scratch_dir() / "kv").string();
  c.kv_disk_space_mb = 16;
  LoopCore core(eng, c);
  EXPECT_EQ(core.disk_tier(), nullptr);
  EXPECT_FALSE(core.config().prefix_cache);
  EXPECT_TRUE(core.config().kv_disk_dir.empty());
  Driver d(core);
  const auto p = make_prompt(50, 3);
  const uint64_t a = d.submit(greedy(p, 5));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[a].tokens, eng.reference(p, 5, true));
}

// KV pressure parks requests mid-decode with their blocks released: they start again at 0 and
// their state with them. A prefill parked for a short request with its blocks kept continues
// its state where it stopped.
TEST(HybridLoop, ParkedRequestsResumeExactly) {
  {
    FakeEngine eng(recurrent_fake());
    SchedConfig c = config();
    c.parallel = 4;
    c.kv_ram_mb = 1;  // 16 blocks: 256 positions for four requests of 140
    LoopCore core(eng, c);
    Driver d(core);
    std::vector<std::vector<int32_t>> ps;
    for (int i = 0; i < 4; ++i) ps.push_back(make_prompt(40, i));
    for (const auto& p : ps) d.submit(greedy(p, 100));
    ASSERT_TRUE(d.run_until_done());
    size_t i = 0;
    for (auto& [id, o] : d.out) {
      EXPECT_EQ(o.final.reason, FinishReason::Length) << o.final.error;
      EXPECT_EQ(o.tokens, eng.reference(ps[i++], 100, true)) << "request " << id;
    }
    EXPECT_GT(core.metrics().kv_preemptions_total, 0u);
    EXPECT_EQ(eng.live_states(), 0u);
  }
  for (int64_t park_ram_mb : {256, 0}) {
    SCOPED_TRACE(park_ram_mb ? "blocks kept pinned" : "blocks released");
    FakeEngine eng(recurrent_fake());
    SchedConfig c = config();
    c.parallel = 1;
    c.ctx = 4096;
    c.preempt_min_tokens = 64;
    c.preempt_max_wait_s = 0;
    c.park_ram_mb = park_ram_mb;
    LoopCore core(eng, c);
    Driver d(core);
    const auto long_prompt = make_prompt(1000, 1);
    const uint64_t big = d.submit(greedy(long_prompt, 10));
    d.step();
    d.step();
    const uint64_t small = d.submit(greedy(make_prompt(10, 2), 5));
    ASSERT_TRUE(d.run_until_done());
    EXPECT_EQ(d.out[big].final.stats.parks, 1);
    EXPECT_EQ(d.out[big].tokens, eng.reference(long_prompt, 10, true)) << d.out[big].final.error;
    EXPECT_EQ(d.out[small].tokens, eng.reference(make_prompt(10, 2), 5, true));
    EXPECT_EQ(eng.live_states(), 0u);
  }
}

// The real engine on llama.cpp's qwen35moe file: requests batched and chunked with others, and
// a conversation resent to the same loop after its first turn ended, give the tokens of their
// runs alone (the engine refuses a step that would continue a state from a restored prefix).
TEST(HybridLoop, RealHybridModelAnswersAsWhenAlone) {
  BATON_REQUIRE_SHARED(model, "models/arch/synth-qwen35moe-Q8_0.gguf");
  engine::EngineOptions opts;
  opts.threads = 2;
  auto eng = engine::load_llama_engine(model.string(), opts);
  const int32_t n_vocab = eng->info().n_vocab;
  // Each wave is submitted once the previous one has finished, to the same loop.
  using Waves = std::vector<std::vector<std::vector<int32_t>>>;
  auto run = [&](const SchedConfig& c, const Waves& waves) {
    EngineLoop loop(*eng, c);
    loop.start();
    std::vector<testing::Outcome> out;
    for (const auto& wave : waves) {
      std::vector<std::shared_ptr<RequestHandle>> hs;
      for (const auto& p : wave) hs.push_back(loop.submit(greedy(p, 12)));
      for (auto& h : hs) out.push_back(testing::drain_all(*h, std::chrono::seconds(120)));
    }
    loop.shutdown();
    return out;
  };
  std::vector<std::vector<int32_t>> ps;
  for (int i = 0; i < 3; ++i) {
    auto p = make_prompt(30 + 17 * i, i, n_vocab);
    p[0] = 1;
    ps.push_back(p);
  }
  SchedConfig whole = config();
  whole.parallel = 1;
  whole.prefill_chunk = 2048;
  std::vector<std::vector<int32_t>> solo;
  for (const auto& p : ps) {
    auto o = run(whole, {{p}});
    ASSERT_TRUE(o[0].finished);
    ASSERT_EQ(o[0].final.reason, FinishReason::Length) << o[0].final.error;
    solo.push_back(o[0].tokens);
  }
  auto second = next_turn(ps[0], solo[0], 9);
  for (int32_t& t : second) t %= n_vocab;
  const auto second_alone = run(whole, {{second}});
  SchedConfig mixed = config();
  mixed.parallel = 4;
  mixed.prefill_chunk = 16;
  mixed.mixed_prefill_chunk = 5;
  auto got = run(mixed, {{ps[0], ps[1], ps[2]}, {second, ps[1]}});
  ASSERT_EQ(got.size(), 5u);
  for (const auto& o : got) EXPECT_EQ(o.final.reason, FinishReason::Length) << o.final.error;
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(got[i].tokens, solo[i]) << "prompt " << i;
  EXPECT_EQ(got[3].tokens, second_alone[0].tokens);
  EXPECT_EQ(got[3].final.stats.cached_tokens, 0);
  EXPECT_EQ(got[4].tokens, solo[1]);
}

}  // namespace
}  // namespace baton::sched
