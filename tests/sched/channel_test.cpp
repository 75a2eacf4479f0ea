// The request channel's event listener and its non-blocking poll, alone and under the real
// engine-loop thread (run these under the tsan preset too).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "support/fake_engine.h"
#include "sched/engine_loop.h"
#include "sched/harness.h"
#include "sched/request.h"

namespace baton::sched {
namespace {

using namespace std::chrono_literals;

TokenEvent token(int32_t id) {
  TokenEvent t;
  t.token = id;
  return t;
}

TEST(Channel, ZeroTimeoutPollReturnsAtOnce) {
  Channel ch(1, 4);
  Event ev;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(ch.next(ev, 0ms));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
  ASSERT_TRUE(ch.try_push_token(token(7)));
  ASSERT_TRUE(ch.next(ev, 0ms));
  EXPECT_EQ(ev.token.token, 7);
  EXPECT_FALSE(ch.next(ev, 0ms));
}

TEST(Channel, ListenerRunsAfterEveryPushOnThePushingThread) {
  Channel ch(1, 4);
  int calls = 0;
  size_t queued_when_called = 0;
  std::thread::id where;
  ch.set_listener([&] {
    ++calls;
    where = std::this_thread::get_id();
    Event ev;
    // The event is already readable when the listener runs (the channel lock is released).
    while (ch.next(ev, 0ms)) ++queued_when_called;
  });
  EXPECT_EQ(calls, 0);  // nothing queued yet
  std::thread pusher([&] {
    ch.try_push_token(token(1));
    ch.try_push_token(token(2));
    ch.push_final(Event{});
  });
  const auto pusher_id = pusher.get_id();
  pusher.join();
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(queued_when_called, 3u);
  EXPECT_EQ(where, pusher_id);
}

TEST(Channel, ListenerSetWhileEventsWaitRunsOnceAtOnce) {
  Channel ch(1, 4);
  ch.try_push_token(token(1));
  ch.try_push_token(token(2));
  int calls = 0;
  ch.set_listener([&] { ++calls; });
  EXPECT_EQ(calls, 1);
}

TEST(Channel, EmptyListenerRemovesIt) {
  Channel ch(1, 4);
  int calls = 0;
  ch.set_listener([&] { ++calls; });
  ch.try_push_token(token(1));
  EXPECT_EQ(calls, 1);
  ch.set_listener({});
  ch.try_push_token(token(2));
  ch.push_final(Event{});
  EXPECT_EQ(calls, 1);
}

TEST(Channel, RefusedPushDoesNotCallTheListener) {
  Channel ch(1, 1);
  int calls = 0;
  ch.set_listener([&] { ++calls; });
  EXPECT_TRUE(ch.try_push_token(token(1)));
  EXPECT_FALSE(ch.try_push_token(token(2)));  // full
  EXPECT_EQ(calls, 1);
  ch.push_final(Event{});  // always delivered
  EXPECT_EQ(calls, 2);
}

// A consumer that never blocks in next(): it sleeps on its own condition variable, woken only
// by the listener, the way an event-driven connection would.
TEST(Channel, ListenerDrivenConsumerReadsEverythingFromTheEngineLoop) {
  engine::FakeEngineConfig fc;
  fc.sleep_us_per_step = 50;
  engine::FakeEngine eng(fc);
  SchedConfig c;
  c.parallel = 4;
  c.ctx = 4096;
  EngineLoop loop(eng, c);
  loop.start();
  const auto prompt = testing::make_prompt(20, 1);
  auto h = loop.submit(testing::greedy(prompt, 64));
  std::mutex mu;
  std::condition_variable cv;
  bool woken = false;
  h->set_listener([&] {
    std::lock_guard<std::mutex> lock(mu);
    woken = true;
    cv.notify_one();
  });
  testing::Outcome o;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!o.finished && std::chrono::steady_clock::now() < deadline) {
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait_until(lock, deadline, [&] { return woken; });
      woken = false;
    }
    testing::drain_ready(*h, o);
  }
  h->set_listener({});
  ASSERT_TRUE(o.finished);
  EXPECT_EQ(o.final.reason, FinishReason::Length);
  EXPECT_EQ(o.tokens, eng.reference(prompt, 64, true));
  loop.shutdown();
}

// Removing the listener while the loop pushes: once set_listener({}) returns, the old listener
// is never entered again, so freeing what it captured is safe.
TEST(Channel, RemovedListenerIsNeverCalledAfterSetListenerReturns) {
  engine::FakeEngine eng;
  SchedConfig c;
  c.parallel = 1;
  c.ctx = 4096;
  c.channel_capacity = 1 << 20;
  EngineLoop loop(eng, c);
  loop.start();
  auto h = loop.submit(testing::greedy(testing::make_prompt(8, 2), 2000));
  std::atomic<bool> removed{false};
  std::atomic<int> late_calls{0};
  std::atomic<int> calls{0};
  h->set_listener([&] {
    calls.fetch_add(1);
    if (removed.load()) late_calls.fetch_add(1);
  });
  while (calls.load() < 10) std::this_thread::sleep_for(1ms);
  h->set_listener({});
  removed.store(true);
  testing::Outcome o = testing::drain_all(*h);
  EXPECT_TRUE(o.finished);
  EXPECT_EQ(late_calls.load(), 0);
  loop.shutdown();
}

}  // namespace
}  // namespace baton::sched
