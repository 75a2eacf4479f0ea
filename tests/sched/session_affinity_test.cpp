// Per-session cache figures: a session's first request here is new, its later ones returning;
// the table is bounded and forgets the least recently seen.
#include "sched/session_affinity.h"

#include <gtest/gtest.h>

namespace baton::sched {
namespace {

using Clock = SessionAffinity::Clock;

TEST(SessionAffinity, FirstRequestIsNewLaterOnesReturning) {
  SessionAffinity s;
  const auto t0 = Clock::now();
  s.record("a", 100, 0, t0);
  s.record("a", 150, 96, t0);
  s.record("b", 80, 16, t0);
  const AffinityTotals& t = s.totals();
  EXPECT_EQ(t.fresh.requests, 2u);
  EXPECT_EQ(t.fresh.prompt_tokens, 180u);
  EXPECT_EQ(t.fresh.cached_tokens, 16u);
  EXPECT_EQ(t.returning.requests, 1u);
  EXPECT_EQ(t.returning.prompt_tokens, 150u);
  EXPECT_EQ(t.returning.cached_tokens, 96u);
  EXPECT_EQ(t.sessions, 2);
}

TEST(SessionAffinity, RequestsWithoutASessionAreNotCounted) {
  SessionAffinity s;
  s.record("", 100, 50, Clock::now());
  EXPECT_EQ(s.totals().fresh.requests, 0u);
  EXPECT_EQ(s.totals().sessions, 0);
  EXPECT_TRUE(s.recent(10, Clock::now()).empty());
}

TEST(SessionAffinity, RecentListsMostRecentFirstWithTheirOwnFigures) {
  SessionAffinity s;
  const auto t0 = Clock::now();
  s.record("a", 10, 0, t0);
  s.record("b", 20, 0, t0 + std::chrono::seconds(1));
  s.record("a", 30, 8, t0 + std::chrono::seconds(2));
  const auto r = s.recent(10, t0 + std::chrono::seconds(5));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].id, "a");
  EXPECT_EQ(r[0].requests, 2u);
  EXPECT_EQ(r[0].prompt_tokens, 40u);
  EXPECT_EQ(r[0].cached_tokens, 8u);
  EXPECT_DOUBLE_EQ(r[0].idle_s, 3.0);
  EXPECT_EQ(r[1].id, "b");
  EXPECT_EQ(s.recent(1, t0).size(), 1u);
}

TEST(SessionAffinity, TheTableIsBoundedAndForgetsTheLeastRecentlySeen) {
  SessionAffinity s(2);
  const auto t0 = Clock::now();
  s.record("a", 10, 0, t0);
  s.record("b", 10, 0, t0);
  s.record("a", 10, 0, t0);  // a is now the most recent
  s.record("c", 10, 0, t0);  // forgets b
  EXPECT_EQ(s.totals().sessions, 2);
  s.record("b", 10, 0, t0);  // b again: forgotten, so new
  EXPECT_EQ(s.totals().fresh.requests, 4u);
  EXPECT_EQ(s.totals().returning.requests, 1u);
  const auto r = s.recent(10, t0);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].id, "b");
  EXPECT_EQ(r[1].id, "c");
}

TEST(SessionAffinity, CachedTokensAreClampedToThePrompt) {
  SessionAffinity s;
  s.record("a", 10, 50, Clock::now());
  s.record("a", -3, -1, Clock::now());
  EXPECT_EQ(s.totals().fresh.cached_tokens, 10u);
  EXPECT_EQ(s.totals().returning.prompt_tokens, 0u);
  EXPECT_EQ(s.totals().returning.cached_tokens, 0u);
}

}  // namespace
}  // namespace baton::sched
