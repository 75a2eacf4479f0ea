#include "bench/stats.h"

#include <gtest/gtest.h>

#include <cmath>

namespace baton::bench {
namespace {

TEST(Percentile, EmptyIsNaN) {
  EXPECT_TRUE(std::isnan(percentile({}, 50)));
}

TEST(Percentile, SingleValueIsEveryPercentile) {
  EXPECT_EQ(percentile({7}, 0), 7);
  EXPECT_EQ(percentile({7}, 50), 7);
  EXPECT_EQ(percentile({7}, 100), 7);
}

TEST(Percentile, InterpolatesLinearlyOnUnsortedInput) {
  std::vector<double> v = {40, 10, 30, 20};
  EXPECT_DOUBLE_EQ(percentile(v, 0), 10);
  EXPECT_DOUBLE_EQ(percentile(v, 100), 40);
  EXPECT_DOUBLE_EQ(percentile(v, 50), 25);
  EXPECT_DOUBLE_EQ(percentile(v, 99), 39.7);
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
}

TEST(Percentile, ClampsOutOfRangeP) {
  EXPECT_DOUBLE_EQ(percentile({1, 2}, -5), 1);
  EXPECT_DOUBLE_EQ(percentile({1, 2}, 500), 2);
}

TEST(Gaps, ConsecutiveDifferences) {
  EXPECT_TRUE(token_gaps({}).empty());
  EXPECT_TRUE(token_gaps({5}).empty());
  EXPECT_EQ(token_gaps({10, 12, 20}), (std::vector<double>{2, 8}));
  EXPECT_EQ(token_gaps({20, 10, 12}), (std::vector<double>{2, 8}));
}

TEST(Gaps, OverlappingAWindowIncludesSpanningGaps) {
  std::vector<double> t = {0, 10, 20, 100, 110, 120};
  // The 80 ms stall from 20 to 100 spans the window [30, 60].
  EXPECT_EQ(gaps_overlapping(t, 30, 60), (std::vector<double>{80}));
  EXPECT_EQ(gaps_overlapping(t, 15, 105), (std::vector<double>{10, 80, 10}));
  EXPECT_TRUE(gaps_overlapping(t, 200, 300).empty());
}

TEST(Summary, EmptyAndNonEmpty) {
  auto e = summarize({});
  EXPECT_EQ(e.count, 0u);
  EXPECT_TRUE(std::isnan(e.max));
  auto s = summarize({1, 2, 3, 10});
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_DOUBLE_EQ(s.mean, 4);
  EXPECT_DOUBLE_EQ(s.p50, 2.5);
}

RequestRecord sample() {
  RequestRecord r;
  r.label = std::string("x");
  r.send_ms = 100;
  r.first_byte_ms = 150;
  r.first_token_ms = 300;
  r.token_ms = {300, 310, 320, 330, 340};
  r.end_ms = 345;
  return r;
}

TEST(RequestStats, TtftQueueWaitAndDecodeRate) {
  auto s = request_stats(sample());
  EXPECT_EQ(s.tokens, 5u);
  EXPECT_DOUBLE_EQ(s.ttft_ms, 200);
  EXPECT_DOUBLE_EQ(s.queue_wait_ms, 50);
  EXPECT_DOUBLE_EQ(s.total_ms, 245);
  EXPECT_DOUBLE_EQ(s.decode_tps, 100);  // 4 gaps over 40 ms
  EXPECT_DOUBLE_EQ(s.gaps.max, 10);
}

TEST(RequestStats, KeepaliveCommentFallsBackToTtft) {
  auto r = sample();
  r.first_byte_was_comment = true;
  EXPECT_TRUE(r.queue_wait_is_fallback());
  EXPECT_DOUBLE_EQ(r.queue_wait_ms(), 200);
}

TEST(RequestStats, NoTokensMeansNotMeasured) {
  RequestRecord r;
  r.send_ms = 5;
  r.end_ms = 9;
  auto s = request_stats(r);
  EXPECT_EQ(s.tokens, 0u);
  EXPECT_LT(s.ttft_ms, 0);
  EXPECT_EQ(s.decode_tps, 0);
}

TEST(Aggregate, TokensOverTheWholeSpan) {
  auto a = sample();  // 5 tokens, 100..345
  auto b = sample();
  b.send_ms = 45;
  b.end_ms = 1045;
  EXPECT_DOUBLE_EQ(aggregate_tokens_per_s({a, b}), 10.0 * 1000 / 1000);
  EXPECT_EQ(aggregate_tokens_per_s({}), 0);
}

}  // namespace
}  // namespace baton::bench
