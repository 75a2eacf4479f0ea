// The engine loop on its own thread, with clients on others (run under ThreadSanitizer too).
#include "sched/engine_loop.h"

#include <gtest/gtest.h>

#include <thread>

#include "support/fake_engine.h"
#include "sched/harness.h"

namespace baton::sched {
namespace {

using namespace std::chrono_literals;
using testing::drain_all;
using testing::greedy;
using testing::make_prompt;
using testing::steps_with;

// Waits for the first token event of `h` and returns it.
bool wait_first_token(RequestHandle& h, std::chrono::milliseconds limit = 20s) {
  Event e;
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (h.next(e, 20ms)) return e.kind == Event::Kind::Token;
  }
  return false;
}

// The original race: a long prompt prefilled in quanta while another stream decodes. With a
// lock-based design the prefill could win the model again after each quantum; here the
// decoder's row must be in every step that carries the prefill.
class OriginalRace : public ::testing::TestWithParam<int32_t> {};

TEST_P(OriginalRace, DecoderIsInEveryStepOfTheLongPrefill) {
  const int32_t quantum = GetParam();
  for (int rep = 0; rep < 8; ++rep) {
    engine::FakeEngineConfig fc;
    fc.sleep_us_per_step = 50;
    engine::FakeEngine eng(fc);
    SchedConfig c;
    c.parallel = 2;
    c.ctx = 200000;
    c.prefill_chunk = 2048;
    c.mixed_prefill_chunk = quantum;
    EngineLoop loop(eng, c);
    loop.start();
    auto a = loop.submit(greedy(make_prompt(12, rep), 100000));
    ASSERT_TRUE(wait_first_token(*a));
    auto b = loop.submit(greedy(make_prompt(4096 + rep * 100, 50 + rep), 3));
    auto ob = drain_all(*b);
    ASSERT_TRUE(ob.finished);
    EXPECT_EQ(ob.final.reason, FinishReason::Length);
    a->cancel();
    auto oa = drain_all(*a);
    ASSERT_TRUE(oa.finished);
    EXPECT_EQ(oa.final.reason, FinishReason::Cancelled);
    loop.shutdown();

    auto steps = eng.steps();
    auto with_a = steps_with(steps, a->id());
    auto with_b = steps_with(steps, b->id());
    ASSERT_FALSE(with_b.empty());
    for (size_t s : with_b) {
      ASSERT_TRUE(std::binary_search(with_a.begin(), with_a.end(), s))
          << "rep " << rep << ": step " << s << " ran request B without the decoder";
      EXPECT_LE(steps[s].total_tokens(), static_cast<size_t>(quantum) + 1);
    }
    std::map<uint64_t, int32_t> lens{{a->id(), 12}, {b->id(), 4096 + rep * 100}};
    EXPECT_EQ(testing::check_invariants(steps, lens), "");
    EXPECT_EQ(ob.tokens, eng.reference(make_prompt(4096 + rep * 100, 50 + rep), 3, true));
  }
}

INSTANTIATE_TEST_SUITE_P(Quanta, OriginalRace, ::testing::Values(128, 2048));

TEST(EngineLoop, ShutdownLetsRunningRequestsFinishWithinGraceAndCancelsTheRest) {
  engine::FakeEngineConfig fc;
  fc.sleep_us_per_step = 500;
  engine::FakeEngine eng(fc);
  SchedConfig c;
  c.parallel = 2;
  c.ctx = 200000;
  c.shutdown_grace_s = 0.3;
  EngineLoop loop(eng, c);
  // The short request must still be running when shutdown() begins, or its slot frees up and
  // `queued` starts (then it ends with Length, not Shutdown). On a slow machine (sanitizers) it
  // used to finish first, so its first decode step waits until the loop stops admitting. An
  // empty prompt probes that without queueing anything: it is refused as ShuttingDown first.
  auto shutting_down = [&loop] {
    try {
      loop.submit(GenerateRequest{});
    } catch (const SubmitError& e) {
      return e.code == SubmitError::Code::ShuttingDown;
    }
    return false;
  };
  bool gated = false;  // loop thread only
  eng.set_on_step([&](const engine::StepBatch& b) {
    for (const auto& s : b.seqs) {
      if (s.request_id != 2 || s.start_pos < 10 || gated) continue;
      gated = true;
      while (!shutting_down()) std::this_thread::sleep_for(1ms);
    }
  });
  loop.start();
  auto endless = loop.submit(greedy(make_prompt(10, 1), 100000));
  auto shortr = loop.submit(greedy(make_prompt(10, 2), 5));
  auto queued = loop.submit(greedy(make_prompt(10, 3), 5));
  ASSERT_EQ(shortr->id(), 2u);
  ASSERT_TRUE(wait_first_token(*endless));
  std::thread reader([&] {
    auto o = drain_all(*shortr);
    EXPECT_TRUE(o.finished);
    EXPECT_EQ(o.final.reason, FinishReason::Length);
  });
  loop.shutdown();  // must return: the endless request is cut at the deadline
  reader.join();
  auto oe = drain_all(*endless, 5s);
  ASSERT_TRUE(oe.finished);
  EXPECT_EQ(oe.final.reason, FinishReason::Shutdown);
  auto oq = drain_all(*queued, 5s);
  ASSERT_TRUE(oq.finished);
  EXPECT_EQ(oq.final.reason, FinishReason::Shutdown);
  try {
    loop.submit(greedy(make_prompt(10, 4), 5));
    FAIL() << "expected ShuttingDown";
  } catch (const SubmitError& e) {
    EXPECT_EQ(e.code, SubmitError::Code::ShuttingDown);
  }
  loop.shutdown();  // idempotent
}

TEST(EngineLoop, ShutdownWithoutStartEndsQueuedRequests) {
  engine::FakeEngine eng;
  EngineLoop loop(eng, SchedConfig{});
  auto h = loop.submit(greedy(make_prompt(10, 1), 5));
  loop.shutdown();
  auto o = drain_all(*h, 1s);
  ASSERT_TRUE(o.finished);
  EXPECT_EQ(o.final.reason, FinishReason::Shutdown);
}

TEST(EngineLoop, ConcurrentClientsGetTheirOwnTokensAndStatusIsConsistent) {
  engine::FakeEngine eng;
  SchedConfig c;
  c.parallel = 3;
  c.ctx = 4096;
  EngineLoop loop(eng, c);
  EXPECT_NE(loop.config().describe().find("parallel=3"), std::string::npos);
  EXPECT_GT(loop.config().kv_blocks, 0);
  loop.start();
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int i = 0; i < 6; ++i) {
    clients.emplace_back([&, i] {
      auto prompt = make_prompt(50 + 300 * i, i);
      auto h = loop.submit(greedy(prompt, 20 + i));
      auto o = drain_all(*h);
      if (o.finished && o.final.reason == FinishReason::Length &&
          o.tokens == eng.reference(prompt, 20 + i, true)) {
        ++ok;
      }
    });
  }
  for (int i = 0; i < 20; ++i) {
    StatusSnapshot st = loop.status();
    EXPECT_LE(st.metrics.requests_running, 3);
    std::this_thread::sleep_for(1ms);
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), 6);
  Metrics m = loop.metrics();
  EXPECT_EQ(m.requests_total["ok"], 6u);
  EXPECT_GT(m.max_decode_gap_seconds, 0.0);
  loop.shutdown();
}

}  // namespace
}  // namespace baton::sched
