// Parking meets a client that stopped reading: a decoder paused by its full channel is the
// natural victim of KV pressure, and when parked it must wait for its client before resuming
// (its resume samples a token that a full channel could not take), then continue with the
// tokens it would have produced unparked; a client that never reads again fails it only after
// --send-stall-timeout-ms, as a paused decoder would.
#include <gtest/gtest.h>

#include <thread>

#include "support/fake_engine.h"
#include "sched/driver.h"
#include "sched/harness.h"
#include "sched/loop_core.h"

namespace baton::sched {
namespace {

using testing::drain_ready;
using testing::greedy;
using testing::make_prompt;
using testing::Outcome;
using testing::small_blocks;

// Two requests of 100 + 120 in a 16-block pool: they cannot both finish without a park.
SchedConfig two_slots(int32_t stall_ms) {
  SchedConfig c;
  c.parallel = 2;
  c.ctx = 1024;
  c.prefill_chunk = 64;
  c.mixed_prefill_chunk = 16;
  c.kv_ram_mb = 1;
  c.channel_capacity = 4;
  c.send_stall_timeout_ms = stall_ms;
  return c;
}

struct Pair {
  std::shared_ptr<RequestHandle> a, b;  // b, admitted last, is the one parked
  Outcome oa, ob;
};

// Steps until b has been parked (its client never read, so it was paused first) and a ended.
void run_until_a_ends(LoopCore& core, Pair& p) {
  p.a = core.submit(greedy(make_prompt(100, 1), 120));
  p.b = core.submit(greedy(make_prompt(100, 2), 120));
  bool parked = false;
  for (int i = 0; i < 2000 && !p.oa.finished; ++i) {
    core.step();
    drain_ready(*p.a, p.oa);
    parked = parked || p.b->state() == RequestState::Parked;
  }
  ASSERT_TRUE(p.oa.finished);
  EXPECT_EQ(p.oa.final.reason, FinishReason::Length) << p.oa.final.error;
  ASSERT_TRUE(parked) << "KV pressure never parked the paused request";
  EXPECT_GT(core.metrics().kv_preemptions_total, 0u);
}

TEST(ParkingStall, PausedRequestParkedUnderKvPressureWaitsForItsClientToResume) {
  engine::FakeEngine eng(small_blocks());
  LoopCore core(eng, two_slots(30000));
  Pair p;
  run_until_a_ends(core, p);
  if (::testing::Test::HasFatalFailure()) return;
  // The pool is free now, but b's client still has not read: b must stay parked, not fail.
  for (int i = 0; i < 20; ++i) core.step();
  EXPECT_EQ(p.b->state(), RequestState::Parked);
  for (int i = 0; i < 2000 && !p.ob.finished; ++i) {
    drain_ready(*p.b, p.ob);
    core.step();
  }
  drain_ready(*p.b, p.ob);
  ASSERT_TRUE(p.ob.finished);
  EXPECT_EQ(p.ob.final.reason, FinishReason::Length) << p.ob.final.error;
  EXPECT_EQ(p.ob.tokens, eng.reference(make_prompt(100, 2), 120, true));
  EXPECT_GE(p.ob.final.stats.parks, 1);
  EXPECT_EQ(core.pool().used(), 0);
}

TEST(ParkingStall, ParkedRequestWhoseClientNeverReadsFailsAfterTheStallTimeout) {
  engine::FakeEngine eng(small_blocks());
  LoopCore core(eng, two_slots(50));
  Pair p;
  run_until_a_ends(core, p);
  if (::testing::Test::HasFatalFailure()) return;
  // Never read: b ends (failed, for the stall) instead of waiting parked forever.
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!p.ob.finished && std::chrono::steady_clock::now() < limit) {
    core.step();
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    // Reading earlier would make room in its channel and let it resume.
    if (p.b->state() == RequestState::Failed) drain_ready(*p.b, p.ob);
  }
  ASSERT_TRUE(p.ob.finished) << "a parked request whose client stopped reading never ended";
  EXPECT_EQ(p.ob.final.reason, FinishReason::Failed);
  EXPECT_NE(p.ob.final.error.find("client did not read"), std::string::npos) << p.ob.final.error;
  EXPECT_EQ(p.ob.tokens.size(), 4u) << "what it produced before its channel filled";
  EXPECT_FALSE(core.has_requests());
  EXPECT_EQ(core.pool().used(), 0);
}

}  // namespace
}  // namespace baton::sched
