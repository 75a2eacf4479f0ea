// The default latency target: measured at start from the engine's own decode steps, on scratch
// sequences that leave nothing behind, and then the size of every mixed step.
#include <gtest/gtest.h>

#include "sched/driver.h"
#include "sched/harness.h"
#include "sched/loop_core.h"
#include "support/fake_engine.h"

namespace baton::sched {
namespace {

using engine::FakeEngine;
using engine::FakeEngineConfig;
using testing::Driver;
using testing::greedy;
using testing::make_prompt;

SchedConfig auto_target() {
  SchedConfig c;
  c.parallel = 2;
  c.ctx = 4096;
  c.itl_target_decode_steps = 3;
  return c;
}

TEST(ItlTarget, AutoIsAMultipleOfTheDecodeStepMeasuredAtStart) {
  FakeEngineConfig e;
  e.sleep_us_per_step = 8000;
  e.sleep_us_per_token = 4000;  // a prefill token costs a third of a decode step, as on a CPU
  FakeEngine eng(e);
  LoopCore core(eng, auto_target());
  // A decode step sleeps at least 12 ms, so the target is at least 3 of them (above the 20 ms
  // floor).
  EXPECT_GE(core.config().itl_target_ms, 36.0);
  EXPECT_GT(eng.n_steps(), 5u) << "warm-up, decode, mixed and prefill steps";
  EXPECT_EQ(core.pool().used(), 0) << "the scratch sequences' blocks went back";
  EXPECT_NE(core.config().describe().find("itl_target_ms="), std::string::npos);
  EXPECT_NE(core.config().describe().find("x_decode_step"), std::string::npos);

  // A long prompt beside a decoding stream: its chunks are sized to the target (a handful of
  // tokens here), not the fixed 128-token mixed chunk, and no output changes.
  Driver d(core);
  const auto stream_prompt = make_prompt(20, 1);
  const auto long_prompt = make_prompt(200, 2);
  const uint64_t stream = d.submit(greedy(stream_prompt, 60));
  for (int i = 0; i < 3; ++i) d.step();
  const size_t before = eng.n_steps();
  const uint64_t longer = d.submit(greedy(long_prompt, 2));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[stream].tokens, eng.reference(stream_prompt, 60, false));
  EXPECT_EQ(d.out[longer].tokens, eng.reference(long_prompt, 2, false));
  const auto steps = eng.steps();
  int mixed = 0;
  for (size_t i = before; i < steps.size(); ++i) {
    const auto& seqs = steps[i].seqs;
    bool has_decode = false, has_prefill = false;
    size_t chunk = 0;
    for (const auto& s : seqs) {
      if (s.request_id == longer && s.tokens.size() > 1) {
        has_prefill = true;
        chunk = s.tokens.size();
      }
      has_decode |= s.request_id == stream;
    }
    if (has_decode && has_prefill) {
      ++mixed;
      EXPECT_LT(chunk, 128u) << "step " << i;
    }
  }
  EXPECT_GT(mixed, 3);
}

TEST(ItlTarget, AnExplicitTargetIsKeptAndNothingRunsAtStart) {
  FakeEngine eng;
  SchedConfig c = auto_target();
  c.itl_target_ms = 150;
  c.itl_target_decode_steps = 0;
  LoopCore core(eng, c);
  EXPECT_DOUBLE_EQ(core.config().itl_target_ms, 150);
  EXPECT_EQ(eng.n_steps(), 0u);
}

TEST(ItlTarget, APoolTooSmallForTheScratchLeavesTheTargetOff) {
  FakeEngineConfig e;
  e.kv_bytes_per_block = 1 << 20;
  FakeEngine eng(e);
  SchedConfig c = auto_target();
  c.kv_ram_mb = 4;  // 4 blocks of 16 positions
  LoopCore core(eng, c);
  EXPECT_EQ(core.config().itl_target_ms, 0);
  EXPECT_EQ(eng.n_steps(), 0u);
  EXPECT_EQ(core.pool().used(), 0);
}

TEST(ItlTarget, ARecurrentModelKeepsNoScratchState) {
  FakeEngineConfig e;
  e.recurrent = true;
  FakeEngine eng(e);
  SchedConfig c = auto_target();
  c.state_ram_mb = 1;
  LoopCore core(eng, c);
  EXPECT_GT(core.config().itl_target_ms, 0);
  EXPECT_EQ(eng.live_states(), 0u);
  Driver d(core);
  const auto prompt = make_prompt(50, 3);
  const uint64_t id = d.submit(greedy(prompt, 4));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[id].tokens, eng.reference(prompt, 4, false));
}

}  // namespace
}  // namespace baton::sched
