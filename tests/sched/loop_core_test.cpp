// The engine loop driven step by step on one thread (deterministic).
#include "sched/loop_core.h"

#include <gtest/gtest.h>

#include "support/fake_engine.h"
#include "sched/driver.h"
#include "sched/harness.h"

namespace baton::sched {
namespace {

using testing::Driver;

using engine::FakeEngine;
using testing::check_invariants;
using testing::drain_ready;
using testing::greedy;
using testing::make_prompt;
using testing::Outcome;
using testing::steps_with;

SchedConfig config(int32_t parallel = 4) {
  SchedConfig c;
  c.parallel = parallel;
  c.ctx = 8192;
  c.prefill_chunk = 2048;
  c.mixed_prefill_chunk = 128;
  return c;
}

TEST(LoopCore, DecoderGetsARowInEveryStepOfALongPrefill) {
  FakeEngine eng;
  LoopCore core(eng, config());
  Driver d(core);
  uint64_t a = d.submit(greedy(make_prompt(10, 1), 100));
  d.step();  // A's prompt, and its first token
  uint64_t b = d.submit(greedy(make_prompt(3000, 2), 4));
  ASSERT_TRUE(d.run_until_done());
  auto steps = eng.steps();
  EXPECT_EQ(check_invariants(steps, d.prompt_len), "");
  auto with_b = steps_with(steps, b);
  auto with_a = steps_with(steps, a);
  for (size_t s : with_b) {
    if (s <= with_a.back()) {
      EXPECT_TRUE(std::count(with_a.begin(), with_a.end(), s)) << s;
    }
  }
  // While A decodes, B's prefill runs in mixed quanta of 128.
  for (size_t s = with_b.front(); s <= with_a.back(); ++s) {
    EXPECT_LE(steps[s].total_tokens(), 128u + 1u);
  }
  EXPECT_EQ(d.out[a].tokens, eng.reference(make_prompt(10, 1), 100, true));
  EXPECT_EQ(d.out[b].tokens, eng.reference(make_prompt(3000, 2), 4, true));
}

TEST(LoopCore, FirstDecodeRowIsInTheStepAfterTheFinalPrefillChunk) {
  FakeEngine eng;
  LoopCore core(eng, config());
  Driver d(core);
  uint64_t a = d.submit(greedy(make_prompt(300, 1), 5));
  ASSERT_TRUE(d.run_until_done());
  auto steps = eng.steps();
  auto with_a = steps_with(steps, a);
  ASSERT_EQ(with_a.size(), 1u + 4u);  // one prefill step (300 < 2048), then 4 decode rows
  for (size_t i = 1; i < with_a.size(); ++i) EXPECT_EQ(with_a[i], with_a[i - 1] + 1);
  EXPECT_EQ(d.out[a].final.stats.prefill_chunks, 1);
  EXPECT_EQ(d.out[a].final.reason, FinishReason::Length);
}

TEST(LoopCore, ShortRequestDuringLongPrefillGetsFirstTokenWithinTwoSteps) {
  FakeEngine eng;
  LoopCore core(eng, config(2));
  Driver d(core);
  d.submit(greedy(make_prompt(8000, 1), 2));
  d.step();
  d.step();
  const size_t at_submit = eng.n_steps();
  uint64_t s = d.submit(greedy(make_prompt(50, 2), 3));
  d.step();
  d.step();
  ASSERT_FALSE(d.out[s].tokens.empty());
  auto with_s = steps_with(eng.steps(), s);
  EXPECT_LE(with_s.front(), at_submit + 1);
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(check_invariants(eng.steps(), d.prompt_len), "");
}

TEST(LoopCore, PrefixReuseAndEvictionNeverSkipADecoder) {
  engine::FakeEngineConfig fc;
  fc.block_size = 16;
  FakeEngine eng(fc);
  SchedConfig c = config(3);
  c.ctx = 1024;
  c.kv_ram_mb = 1;  // 1 MiB / 4096 B = 256 blocks
  LoopCore core(eng, c);
  ASSERT_EQ(core.pool().n_blocks(), 256);
  Driver d(core);
  // Fill the cache with finished conversations.
  auto system = make_prompt(400, 9);
  for (int i = 0; i < 6; ++i) {
    auto p = make_prompt(600, 20 + i);
    d.submit(greedy(p, 2));
    ASSERT_TRUE(d.run_until_done());
  }
  {
    auto p = system;
    p.push_back(5);
    d.submit(greedy(p, 2));
    ASSERT_TRUE(d.run_until_done());
  }
  uint64_t a = d.submit(greedy(make_prompt(20, 3), 200));
  d.step();
  // B shares the system prompt and needs more blocks than are free: evictions + a lookup.
  auto pb = system;
  for (int i = 0; i < 300; ++i) pb.push_back(7 + i % 50);
  uint64_t b = d.submit(greedy(pb, 4));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(check_invariants(eng.steps(), d.prompt_len), "");
  EXPECT_GE(d.out[b].final.stats.cached_tokens, 384);
  EXPECT_GT(core.pool().stats().evictions, 0u);
  EXPECT_EQ(d.out[b].tokens, eng.reference(pb, 4, true));
  EXPECT_EQ(d.out[a].tokens, eng.reference(make_prompt(20, 3), 200, true));
  EXPECT_EQ(core.pool().used(), 0);
}

TEST(LoopCore, RepeatedPromptReusesPartialTailViaCopy) {
  FakeEngine eng;
  LoopCore core(eng, config());
  Driver d(core);
  auto p = make_prompt(40, 4);  // 2 full blocks + 8 tokens
  d.submit(greedy(p, 3));
  ASSERT_TRUE(d.run_until_done());
  uint64_t again = d.submit(greedy(p, 3));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[again].final.stats.cached_tokens, 39);
  EXPECT_EQ(eng.copies(), 1);
  EXPECT_EQ(d.out[again].tokens, eng.reference(p, 3, true));
  Metrics m = core.metrics();
  EXPECT_EQ(m.prefix_cache_queries_total, 2u);
  EXPECT_EQ(m.prefix_cache_hits_total, 1u);
}

TEST(LoopCore, PrefixCacheOffReusesNothing) {
  FakeEngine eng;
  SchedConfig c = config();
  c.prefix_cache = false;
  LoopCore core(eng, c);
  Driver d(core);
  auto p = make_prompt(40, 4);
  d.submit(greedy(p, 3));
  ASSERT_TRUE(d.run_until_done());
  uint64_t again = d.submit(greedy(p, 3));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[again].final.stats.cached_tokens, 0);
  EXPECT_EQ(d.out[again].tokens, eng.reference(p, 3, true));
}

TEST(LoopCore, CancelWhileQueuedAndMidPrefill) {
  FakeEngine eng;
  LoopCore core(eng, config(1));
  Driver d(core);
  uint64_t long_id = d.submit(greedy(make_prompt(6000, 1), 4));
  uint64_t queued = d.submit(greedy(make_prompt(10, 2), 4));
  d.step();
  EXPECT_EQ(d.handles[queued]->state(), RequestState::Queued);
  d.handles[queued]->cancel();
  d.handles[long_id]->cancel();  // after one 2048 quantum of 6000
  d.step();
  EXPECT_TRUE(d.out[queued].finished);
  EXPECT_EQ(d.out[queued].final.reason, FinishReason::Cancelled);
  EXPECT_TRUE(d.out[long_id].finished);
  EXPECT_EQ(d.out[long_id].final.reason, FinishReason::Cancelled);
  EXPECT_EQ(d.handles[long_id]->state(), RequestState::Cancelled);
  EXPECT_EQ(core.pool().used(), 0);
  EXPECT_EQ(eng.n_steps(), 1u);
  EXPECT_EQ(core.metrics().requests_total.at("cancelled"), 2u);
  // The cancelled prefill's full blocks stay cached for a retry.
  EXPECT_EQ(core.pool().peek(make_prompt(6000, 1)), 2048);
}

TEST(LoopCore, SendStallFailsOnlyThatRequest) {
  FakeEngine eng;
  SchedConfig c = config();
  c.channel_capacity = 2;
  c.send_stall_timeout_ms = 0;
  LoopCore core(eng, c);
  auto stalled = core.submit(greedy(make_prompt(10, 1), 50));  // never read
  Driver d(core);
  uint64_t ok = d.submit(greedy(make_prompt(12, 2), 20));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[ok].final.reason, FinishReason::Length);
  EXPECT_EQ(d.out[ok].tokens.size(), 20u);
  EXPECT_EQ(stalled->state(), RequestState::Failed);
  testing::Outcome o;
  drain_ready(*stalled, o);
  EXPECT_EQ(o.tokens.size(), 2u);
  ASSERT_TRUE(o.finished);
  EXPECT_NE(o.final.error.find("send-stall-timeout-ms"), std::string::npos) << o.final.error;
}

TEST(LoopCore, PausedByBackpressureResumesWhenRead) {
  FakeEngine eng;
  SchedConfig c = config();
  c.channel_capacity = 2;
  LoopCore core(eng, c);
  auto h = core.submit(greedy(make_prompt(10, 1), 6));
  for (int i = 0; i < 5; ++i) core.step();  // 2 tokens buffered, then paused
  EXPECT_EQ(eng.n_steps(), 2u);
  Outcome o;
  for (int i = 0; i < 20 && !o.finished; ++i) {
    drain_ready(*h, o);
    core.step();
  }
  drain_ready(*h, o);
  EXPECT_EQ(o.tokens, eng.reference(make_prompt(10, 1), 6, true));
}

TEST(LoopCore, EngineFailureFailsThatStepsRequestsAndTheLoopGoesOn) {
  FakeEngine eng;
  LoopCore core(eng, config());
  Driver d(core);
  uint64_t bad = d.submit(greedy(make_prompt(10, 1), 5));
  eng.fail_on(bad);
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[bad].final.reason, FinishReason::Failed);
  EXPECT_NE(d.out[bad].final.error.find("injected failure"), std::string::npos);
  uint64_t good = d.submit(greedy(make_prompt(10, 2), 5));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[good].final.reason, FinishReason::Length);
  EXPECT_EQ(core.pool().used(), 0);
  EXPECT_EQ(core.metrics().requests_total.at("failed"), 1u);
}

TEST(LoopCore, StopsAtEndOfGenerationUnlessIgnored) {
  engine::FakeEngineConfig fc;
  fc.n_vocab = 5;  // EOG (2) comes up often
  FakeEngine eng(fc);
  LoopCore core(eng, config());
  Driver d(core);
  auto prompt = std::vector<int32_t>{3, 4, 3};
  auto ref = eng.reference(prompt, 50, false);
  ASSERT_EQ(ref.back(), 2) << "pick a prompt whose reference hits EOG";
  uint64_t stop = d.submit(greedy(prompt, 50, /*ignore_eos=*/false));
  uint64_t go_on = d.submit(greedy(prompt, 50, /*ignore_eos=*/true));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[stop].final.reason, FinishReason::Stop);
  EXPECT_EQ(d.out[stop].tokens, std::vector<int32_t>(ref.begin(), ref.end() - 1));
  EXPECT_EQ(d.out[go_on].tokens.size(), 50u);
  EXPECT_EQ(check_invariants(eng.steps(), d.prompt_len), "");
}

TEST(LoopCore, SubmitValidation) {
  FakeEngine eng;
  SchedConfig c = config(1);
  c.ctx = 100;
  c.max_queue = 2;
  LoopCore core(eng, c);
  try {
    core.submit(greedy(make_prompt(90, 1), 20));
    FAIL() << "expected TooLong";
  } catch (const SubmitError& e) {
    EXPECT_EQ(e.code, SubmitError::Code::TooLong);
    EXPECT_NE(std::string(e.what()).find("90"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("20"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("100"), std::string::npos);
  }
  EXPECT_THROW(core.submit(greedy({}, 5)), SubmitError);
  EXPECT_THROW(core.submit(greedy({1, 9999}, 5)), SubmitError);
  core.submit(greedy(make_prompt(5, 1), 5));
  core.submit(greedy(make_prompt(5, 2), 5));
  try {
    core.submit(greedy(make_prompt(5, 3), 5));
    FAIL() << "expected QueueFull";
  } catch (const SubmitError& e) {
    EXPECT_EQ(e.code, SubmitError::Code::QueueFull);
  }
  EXPECT_EQ(core.metrics().requests_total.at("rejected"), 4u);
  core.stop_admitting();
  try {
    core.submit(greedy(make_prompt(5, 3), 5));
    FAIL() << "expected ShuttingDown";
  } catch (const SubmitError& e) {
    EXPECT_EQ(e.code, SubmitError::Code::ShuttingDown);
  }
}

TEST(LoopCore, AtMostParallelHoldASlotAndTheRestWaitInOrder) {
  FakeEngine eng;
  LoopCore core(eng, config(2));
  Driver d(core);
  std::vector<uint64_t> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(d.submit(greedy(make_prompt(30, i), 10)));
  d.step();
  StatusSnapshot st = core.status();
  ASSERT_EQ(st.requests.size(), 5u);
  int running = 0;
  for (const auto& r : st.requests) running += r.state != RequestState::Queued;
  EXPECT_EQ(running, 2);
  EXPECT_EQ(st.requests[2].state, RequestState::Queued);
  ASSERT_TRUE(d.run_until_done());
  // Admission in arrival order: first rows appear in id order.
  size_t prev = 0;
  for (uint64_t id : ids) {
    size_t first = steps_with(eng.steps(), id).front();
    EXPECT_GE(first, prev);
    prev = first;
  }
  Metrics m = core.metrics();
  EXPECT_EQ(m.requests_total.at("ok"), 5u);
  EXPECT_EQ(m.generation_tokens_total, 50u);
  EXPECT_EQ(m.prompt_tokens_total, 150u);
  EXPECT_EQ(m.time_to_first_token.count, 5u);
  EXPECT_EQ(m.inter_token_latency.count, 45u);
  EXPECT_EQ(m.e2e_latency.count, 5u);
  EXPECT_EQ(m.queue_time.count, 5u);
  EXPECT_GT(m.steps_total.at("decode"), 0u);
  EXPECT_GT(m.steps_total.at("prefill"), 0u);
  EXPECT_GT(m.max_step_seconds.at("decode"), 0.0);
  EXPECT_GT(m.max_step_seconds.at("prefill"), 0.0);
  EXPECT_EQ(m.requests_running, 0);
  EXPECT_EQ(m.kv_blocks_used, 0);
  EXPECT_GT(m.kv_blocks_cached, 0);
}

}  // namespace
}  // namespace baton::sched
