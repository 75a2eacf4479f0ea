// The Retry-After of a 503 at the queue limit: the time until the queue moves up a place, from
// how long finished requests ran.
#include <gtest/gtest.h>

#include "sched/metrics.h"

namespace baton::sched {
namespace {

Metrics finished(std::initializer_list<std::pair<double, double>> queue_and_total_s) {
  Metrics m;
  for (auto [queue, total] : queue_and_total_s) {
    m.queue_time.observe(queue);
    m.e2e_latency.observe(total);
  }
  return m;
}

TEST(RetryAfter, OneSecondBeforeAnyRequestHasFinished) {
  EXPECT_EQ(retry_after_queue_full_s(Metrics{}, 4), 1);
}

TEST(RetryAfter, TheMeanRunningTimeSharedByTheSlots) {
  // Requests ran 20 s each past a 10 s queue wait: with 4 running, one finishes every ~5 s.
  const Metrics m = finished({{10, 30}, {10, 30}});
  EXPECT_EQ(retry_after_queue_full_s(m, 4), 5);
  EXPECT_EQ(retry_after_queue_full_s(m, 1), 20);
  EXPECT_EQ(retry_after_queue_full_s(m, 0), 20) << "parallel below 1 counts as 1";
}

TEST(RetryAfter, BoundedToOneMinuteAndAtLeastOneSecond) {
  EXPECT_EQ(retry_after_queue_full_s(finished({{0, 3600}}), 1), 60);
  EXPECT_EQ(retry_after_queue_full_s(finished({{0, 0.05}}), 8), 1);
  EXPECT_EQ(retry_after_queue_full_s(finished({{5, 1}}), 2), 1) << "never negative";
}

}  // namespace
}  // namespace baton::sched
