// Parking, driven step by step on one thread: KV pressure parks the most recently admitted
// request instead of failing anyone, a parked request resumes ahead of new arrivals and produces
// the tokens it would have produced unparked, and a cancel while parked frees everything.
#include <gtest/gtest.h>

#include <thread>

#include "support/fake_engine.h"
#include "sched/driver.h"
#include "sched/harness.h"
#include "sched/loop_core.h"

namespace baton::sched {
namespace {

using engine::FakeEngine;
using testing::drain_ready;
using testing::Driver;
using testing::greedy;
using testing::make_prompt;
using testing::Outcome;
using testing::small_blocks;

SchedConfig tight(int32_t parallel, int64_t kv_ram_mb = 1) {
  SchedConfig c;
  c.parallel = parallel;
  c.ctx = 1024;
  c.prefill_chunk = 64;
  c.mixed_prefill_chunk = 16;
  c.kv_ram_mb = kv_ram_mb;
  return c;
}

TEST(Parking, KvPressureParksInsteadOfFailingAndEveryRequestCompletes) {
  FakeEngine eng(small_blocks());
  LoopCore core(eng, tight(4));  // 16 blocks: 256 positions for four requests of 140
  ASSERT_EQ(core.pool().n_blocks(), 16);
  Driver d(core);
  std::vector<GenerateRequest> reqs;
  for (int i = 0; i < 4; ++i) reqs.push_back(greedy(make_prompt(40, i), 100));
  for (const auto& r : reqs) d.submit(r);
  d.step();
  // Admission asks for what each needs now (prompt + a block of headroom), not prompt + 100.
  EXPECT_EQ(d.core.metrics().requests_running, 4);
  ASSERT_TRUE(d.run_until_done());
  size_t i = 0;
  int32_t parks = 0;
  for (auto& [id, o] : d.out) {
    EXPECT_EQ(o.final.reason, FinishReason::Length) << o.final.error;
    EXPECT_EQ(o.tokens, eng.reference(reqs[i].prompt, 100, true)) << "request " << id;
    parks += o.final.stats.parks;
    ++i;
  }
  Metrics m = core.metrics();
  EXPECT_GT(m.kv_preemptions_total, 0u);
  EXPECT_EQ(static_cast<uint64_t>(parks), m.kv_preemptions_total);
  EXPECT_EQ(m.prefill_resumes_total, m.kv_preemptions_total);
  EXPECT_EQ(m.requests_total["failed"], 0u);
  EXPECT_EQ(m.parked_requests, 0);
  EXPECT_EQ(core.pool().used(), 0);
  EXPECT_EQ(testing::check_invariants(eng.steps(), d.prompt_len, {1, 2, 3, 4}), "");
}

TEST(Parking, TheMostRecentlyAdmittedIsParkedAndResumesAheadOfNewArrivals) {
  FakeEngine eng(small_blocks());
  LoopCore core(eng, tight(2));
  Driver d(core);
  const uint64_t a = d.submit(greedy(make_prompt(100, 1), 120));
  const uint64_t b = d.submit(greedy(make_prompt(100, 2), 120));
  std::optional<RequestStatus> p;
  for (int i = 0; i < 400 && !p; ++i) {
    d.step();
    p = d.parked();
  }
  ASSERT_TRUE(p);
  EXPECT_EQ(p->id, b);
  EXPECT_EQ(p->parked_why, "kv_pressure");
  EXPECT_GT(p->position, 100);
  EXPECT_EQ(p->blocks_kept, 0);
  EXPECT_EQ(d.handles[b]->state(), RequestState::Parked);
  // A newcomer that would fit waits behind the parked request.
  const uint64_t c = d.submit(greedy(make_prompt(10, 3), 4));
  ASSERT_TRUE(d.run_until_done());
  // b's resume (its positions start over) comes no later than c's first row.
  std::optional<size_t> b_resume;
  int32_t end = -1;
  const auto apps = testing::appearances(eng.steps());
  for (const auto& ap : apps.at(b)) {
    if (ap.start_pos < end && !b_resume) b_resume = ap.step;
    end = ap.start_pos + ap.n_tokens;
  }
  const auto with_c = testing::steps_with(eng.steps(), c);
  ASSERT_TRUE(b_resume);
  ASSERT_FALSE(with_c.empty());
  EXPECT_LE(*b_resume, with_c.front());
  for (uint64_t id : {a, b, c}) {
    EXPECT_EQ(d.out[id].final.reason, FinishReason::Length) << d.out[id].final.error;
  }
  EXPECT_EQ(d.out[b].tokens, eng.reference(make_prompt(100, 2), 120, true));
}

TEST(Parking, SampledRequestParkedMidDecodeKeepsItsRngAndPenalties) {
  GenerateRequest r = greedy(make_prompt(100, 7), 120, /*ignore_eos=*/true);
  r.sampling.temperature = 1.5f;
  r.sampling.top_k = 20;
  r.sampling.repetition_penalty = 1.3f;
  r.sampling.frequency_penalty = 0.5f;
  r.sampling.seed = 42;
  std::vector<int32_t> solo;
  {
    FakeEngine eng(small_blocks());
    LoopCore core(eng, tight(2, 4));
    Driver d(core);
    d.submit(r);
    ASSERT_TRUE(d.run_until_done());
    solo = d.out.begin()->second.tokens;
    ASSERT_EQ(solo.size(), 120u);
  }
  FakeEngine eng(small_blocks());
  LoopCore core(eng, tight(2));
  Driver d(core);
  d.submit(greedy(make_prompt(100, 8), 120));
  const uint64_t id = d.submit(r);  // admitted last: the one parked
  ASSERT_TRUE(d.run_until_done());
  EXPECT_GE(d.out[id].final.stats.parks, 1);
  EXPECT_EQ(d.out[id].tokens, solo);
}

TEST(Parking, CancelWhileParkedFreesEveryBlock) {
  FakeEngine eng(small_blocks());
  LoopCore core(eng, tight(2));
  Driver d(core);
  const uint64_t a = d.submit(greedy(make_prompt(100, 1), 120));
  const uint64_t b = d.submit(greedy(make_prompt(100, 2), 120));
  std::optional<RequestStatus> p;
  for (int i = 0; i < 400 && !p; ++i) {
    d.step();
    p = d.parked();
  }
  ASSERT_TRUE(p);
  ASSERT_EQ(p->id, b);
  d.handles[b]->cancel();
  d.step();
  EXPECT_TRUE(d.out[b].finished);
  EXPECT_EQ(d.out[b].final.reason, FinishReason::Cancelled);
  EXPECT_EQ(d.core.metrics().parked_requests, 0);
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[a].final.reason, FinishReason::Length);
  EXPECT_EQ(core.pool().used(), 0);
  EXPECT_EQ(core.table_refs(), 0);
}

TEST(Parking, ShutdownEndsParkedRequests) {
  FakeEngine eng(small_blocks());
  LoopCore core(eng, tight(2));
  Driver d(core);
  d.submit(greedy(make_prompt(100, 1), 120));
  const uint64_t b = d.submit(greedy(make_prompt(100, 2), 120));
  for (int i = 0; i < 400 && !d.parked(); ++i) d.step();
  ASSERT_TRUE(d.parked());
  EXPECT_TRUE(core.has_running());
  core.finish_all(FinishReason::Shutdown);
  drain_ready(*d.handles[b], d.out[b]);
  EXPECT_TRUE(d.out[b].finished);
  EXPECT_EQ(d.out[b].final.reason, FinishReason::Shutdown);
  EXPECT_FALSE(core.has_running());
  EXPECT_EQ(core.pool().used(), 0);
}

// One slot, a long prompt prefilling in 64-token chunks, and a short request arriving.
SchedConfig one_slot() {
  SchedConfig c;
  c.parallel = 1;
  c.ctx = 4096;
  c.prefill_chunk = 64;
  c.mixed_prefill_chunk = 16;
  c.preempt_min_tokens = 64;
  c.preempt_max_wait_s = 0;
  return c;
}

// Where request `id`'s positions start over (a resume that recomputes), if anywhere.
std::optional<size_t> restart_step(const std::vector<engine::StepBatch>& steps, uint64_t id) {
  int32_t end = -1;
  const auto apps = testing::appearances(steps);
  for (const auto& a : apps.at(id)) {
    if (a.start_pos < end) return a.step;
    end = a.start_pos + a.n_tokens;
  }
  return std::nullopt;
}

TEST(Parking, PrefillParkedAtAChunkBoundaryForAShortRequestResumesWithIdenticalTokens) {
  for (int64_t park_ram_mb : {256, 0}) {
    SCOPED_TRACE(park_ram_mb ? "blocks kept pinned" : "blocks released to the prefix cache");
    FakeEngine eng;
    SchedConfig c = one_slot();
    c.park_ram_mb = park_ram_mb;
    LoopCore core(eng, c);
    Driver d(core);
    const auto long_prompt = make_prompt(1000, 1);
    const uint64_t big = d.submit(greedy(long_prompt, 10));
    d.step();
    d.step();  // 128 of 1000 computed
    const uint64_t small = d.submit(greedy(make_prompt(10, 2), 5));
    d.step();
    auto p = d.parked();
    ASSERT_TRUE(p);
    EXPECT_EQ(p->id, big);
    EXPECT_EQ(p->parked_why, "prefill_preempt");
    EXPECT_EQ(p->position, 128) << "parked at the chunk boundary";
    EXPECT_EQ(p->blocks_kept, park_ram_mb ? 8 : 0);
    ASSERT_TRUE(d.run_until_done());
    EXPECT_EQ(d.out[small].tokens, eng.reference(make_prompt(10, 2), 5, true));
    EXPECT_EQ(d.out[big].tokens, eng.reference(long_prompt, 10, true));
    EXPECT_EQ(d.out[big].final.stats.parks, 1);
    // The short one was served in full before the long one's first token.
    EXPECT_LT(testing::steps_with(eng.steps(), small).back(),
              testing::steps_with(eng.steps(), big)[2]);
    // Kept blocks resume where they were; released ones come back from the prefix cache (all of
    // them here: nothing evicted them), so the prefill goes on from the same position.
    EXPECT_FALSE(restart_step(eng.steps(), big).has_value());
    EXPECT_EQ(core.metrics().prefix_cache_hits_total, park_ram_mb ? 0u : 1u);
    EXPECT_EQ(testing::check_invariants(eng.steps(), d.prompt_len, {big}), "");
    Metrics m = core.metrics();
    EXPECT_EQ(m.prefill_preemptions_total, 1u);
    EXPECT_EQ(m.prefill_resumes_total, 1u);
    EXPECT_EQ(core.pool().used(), 0);
  }
}

TEST(Parking, PreemptionGatesOnTheLoop) {
  struct Gate {
    const char* name;
    void (*apply)(SchedConfig&);
    int32_t small_prompt;
  };
  const Gate gates[] = {
      {"--no-prefill-preempt", [](SchedConfig& c) { c.prefill_preempt = false; }, 10},
      {"--preempt-min-tokens", [](SchedConfig& c) { c.preempt_min_tokens = 1001; }, 10},
      {"--preempt-max-per-request 0", [](SchedConfig& c) { c.preempt_max_per_request = 0; }, 10},
      {"not shorter than the remaining work", [](SchedConfig&) {}, 900},
  };
  for (const auto& g : gates) {
    SCOPED_TRACE(g.name);
    FakeEngine eng;
    SchedConfig c = one_slot();
    g.apply(c);
    LoopCore core(eng, c);
    Driver d(core);
    d.submit(greedy(make_prompt(1000, 1), 10));
    d.step();
    d.step();
    d.submit(greedy(make_prompt(g.small_prompt, 2), 5));
    ASSERT_TRUE(d.run_until_done());
    EXPECT_EQ(core.metrics().prefill_preemptions_total, 0u);
  }
}

TEST(Parking, AtMostMaxPerRequestParkings) {
  FakeEngine eng;
  SchedConfig c = one_slot();
  c.preempt_max_per_request = 1;
  LoopCore core(eng, c);
  Driver d(core);
  const uint64_t big = d.submit(greedy(make_prompt(1000, 1), 10));
  d.step();
  d.step();
  d.submit(greedy(make_prompt(10, 2), 3));
  // Back in its slot after the first short one, it is not parked for a second.
  for (int i = 0; i < 10 && d.out[big].final.stats.parks == 0 && !d.parked(); ++i) d.step();
  for (int i = 0; i < 10 && d.parked(); ++i) d.step();
  ASSERT_FALSE(d.parked());
  d.submit(greedy(make_prompt(10, 3), 3));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[big].final.stats.parks, 1);
  EXPECT_EQ(core.metrics().prefill_preemptions_total, 1u);
}

// No request starves: a parked prefill whose short preempter then decodes for a long time takes
// its slot back after --preempt-max-wait-s, and everybody ends with their own tokens.
TEST(Parking, MaxWaitForcesTheParkedRequestBack) {
  FakeEngine eng;
  SchedConfig c = one_slot();
  const auto max_wait = std::chrono::milliseconds(20);
  c.preempt_max_wait_s = std::chrono::duration<double>(max_wait).count();
  LoopCore core(eng, c);
  Driver d(core);
  const auto long_prompt = make_prompt(1000, 1);
  const uint64_t big = d.submit(greedy(long_prompt, 10));
  d.step();
  d.step();
  const uint64_t small = d.submit(greedy(make_prompt(10, 2), 2000));
  d.step();
  const auto parked_by = std::chrono::steady_clock::now();
  ASSERT_TRUE(d.parked());
  // Nothing steps meanwhile, so the wait is the only thing that changes: a sleep never ends
  // early, and a late one (a loaded machine) only makes the wait longer.
  std::this_thread::sleep_until(parked_by + max_wait + std::chrono::milliseconds(1));
  for (int i = 0; i < 3 && !d.out[big].finished; ++i) d.step();
  auto p = d.parked();
  ASSERT_TRUE(p);
  EXPECT_EQ(p->id, small);
  EXPECT_EQ(p->parked_why, "max_wait");
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[big].tokens, eng.reference(long_prompt, 10, true));
  EXPECT_EQ(d.out[small].final.reason, FinishReason::Length);
  EXPECT_EQ(d.out[small].tokens.size(), 2000u);
  EXPECT_EQ(core.pool().used(), 0);
}

// --max-step-ms on the loop: once the per-token cost is measured (the first, full-size chunk),
// the chunks shrink so a step stays near the bound, and the tokens do not change.
TEST(TimeBoundedSteps, ChunksShrinkToTheMeasuredBudget) {
  engine::FakeEngineConfig e;
  e.sleep_us_per_token = 100;  // 0.1 ms per token: 2048 tokens take ~205 ms
  FakeEngine eng(e);
  SchedConfig c;
  c.parallel = 2;
  c.ctx = 8192;
  c.prefill_chunk = 2048;
  c.max_step_ms = 20;
  LoopCore core(eng, c);
  Driver d(core);
  const auto prompt = make_prompt(3000, 1);
  const uint64_t id = d.submit(greedy(prompt, 3));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[id].tokens, eng.reference(prompt, 3, true));
  std::vector<int32_t> chunks;
  const auto apps = testing::appearances(eng.steps());
  for (const auto& a : apps.at(id)) {
    if (a.start_pos < 3000) chunks.push_back(a.n_tokens);
  }
  ASSERT_GE(chunks.size(), 3u);
  EXPECT_EQ(chunks[0], 128) << "nothing measured yet: a probe chunk";
  for (size_t i = 1; i < chunks.size(); ++i) {
    EXPECT_LE(chunks[i], 400) << "chunk " << i;  // ~200 expected; loose for a busy machine
    EXPECT_GE(chunks[i] + (i + 1 == chunks.size() ? kMinQuantum : 0), kMinQuantum);
  }
}

}  // namespace
}  // namespace baton::sched
