// The live feed: the ring's bounds (a reader that falls behind is told what it lost and holds
// nothing), and the records the loop writes, checked against the batches the fake engine ran.
#include "sched/live_feed.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "sched/driver.h"
#include "sched/harness.h"
#include "support/fake_engine.h"

namespace baton::sched {
namespace {

using engine::FakeEngine;
using testing::Driver;
using testing::greedy;
using testing::make_prompt;

StepRecord live_record_with(int32_t rows) {
  StepRecord r;
  for (int32_t i = 0; i < rows; ++i) r.rows.push_back({static_cast<uint64_t>(i + 1), 1, 0, i});
  return r;
}

TEST(LiveFeed, ReadsInOrderFromACursor) {
  LiveFeed feed(8);
  for (int i = 0; i < 5; ++i) feed.push(live_record_with(i));
  auto s = feed.read(0, 3);
  ASSERT_EQ(s.records.size(), 3u);
  EXPECT_EQ(s.lost, 0u);
  EXPECT_EQ(s.records[0]->seq, 0u);
  EXPECT_EQ(s.records[2]->rows.size(), 2u);
  EXPECT_EQ(s.next, 3u);
  s = feed.read(s.next, 100);
  ASSERT_EQ(s.records.size(), 2u);
  EXPECT_EQ(s.records[1]->seq, 4u);
  EXPECT_EQ(s.next, 5u);
  EXPECT_TRUE(feed.read(5, 100).records.empty());
  EXPECT_EQ(feed.next_seq(), 5u);
}

TEST(LiveFeed, AReaderThatFellBehindIsToldHowManyStepsItLost) {
  LiveFeed feed(4);
  for (int i = 0; i < 10; ++i) feed.push(live_record_with(1));
  auto s = feed.read(2, 100);
  EXPECT_EQ(s.lost, 4u);  // 2..5 were overwritten; 6..9 are held
  ASSERT_EQ(s.records.size(), 4u);
  EXPECT_EQ(s.records.front()->seq, 6u);
  EXPECT_EQ(s.next, 10u);
  // A cursor past the end (from an earlier server) starts at the end.
  s = feed.read(1000, 100);
  EXPECT_TRUE(s.records.empty());
  EXPECT_EQ(s.next, 10u);
}

TEST(LiveFeed, MemoryIsTheRingWhateverTheReaders) {
  LiveFeed feed(16);
  // A reader holding a slice keeps those records alive; the ring itself never grows.
  auto held = feed.read(0, 100);
  for (int i = 0; i < 1000; ++i) feed.push(live_record_with(2));
  EXPECT_EQ(feed.capacity(), 16u);
  auto s = feed.read(0, 1000);
  EXPECT_EQ(s.records.size(), 16u);
  EXPECT_EQ(s.lost, 1000u - 16u);
  // Every record a slice holds is one of the ring's (shared, not copied).
  auto again = feed.read(1000 - 16, 16);
  EXPECT_EQ(again.records.front().get(), s.records.front().get());
}

SchedConfig live_config() {
  SchedConfig c;
  c.parallel = 4;
  c.ctx = 8192;
  c.prefill_chunk = 2048;
  c.mixed_prefill_chunk = 128;
  return c;
}

// The records say what the engine ran: per step, the rows of each request, in the order the
// engine saw them; a long prefill beside two decoding streams shows both streams in every step.
TEST(LiveFeed, RecordsMatchTheStepsTheEngineRan) {
  FakeEngine eng;
  LoopCore core(eng, live_config());
  Driver d(core);
  const uint64_t a = d.submit(greedy(make_prompt(10, 1), 60));
  const uint64_t b = d.submit(greedy(make_prompt(12, 2), 60));
  d.step();
  d.step();
  const uint64_t long_id = d.submit(greedy(make_prompt(3000, 3), 2));
  ASSERT_TRUE(d.run_until_done());
  const auto steps = eng.steps();
  const auto feed = core.live();
  auto slice = feed->read(0, 100000);
  EXPECT_EQ(slice.lost, 0u);
  std::vector<std::shared_ptr<const StepRecord>> ran;
  for (const auto& r : slice.records) {
    if (!r->rows.empty()) ran.push_back(r);
  }
  ASSERT_EQ(ran.size(), steps.size());
  // The streams decode until their last row; every prefill step of the long prompt before it
  // carries a decode row of each.
  size_t last_a = 0;
  for (size_t i = 0; i < ran.size(); ++i) {
    for (const auto& row : ran[i]->rows) {
      if (row.request == a) last_a = i;
    }
  }
  int long_prefill_steps = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    ASSERT_EQ(ran[i]->rows.size(), steps[i].seqs.size()) << "step " << i;
    for (size_t k = 0; k < ran[i]->rows.size(); ++k) {
      const auto& row = ran[i]->rows[k];
      EXPECT_EQ(row.request, steps[i].seqs[k].request_id);
      EXPECT_EQ(row.decode_rows + row.prefill_tokens,
                static_cast<int32_t>(steps[i].seqs[k].tokens.size()));
    }
    auto has = [&](uint64_t id, bool prefill) {
      return std::any_of(ran[i]->rows.begin(), ran[i]->rows.end(), [&](const LiveRow& r) {
        return r.request == id && (prefill ? r.prefill_tokens > 0 : r.decode_rows > 0);
      });
    };
    if (has(long_id, true) && i < last_a) {
      ++long_prefill_steps;
      EXPECT_TRUE(has(a, false)) << "step " << ran[i]->seq;
      EXPECT_TRUE(has(b, false)) << "step " << ran[i]->seq;
    }
    EXPECT_GE(ran[i]->ms, 0);
    if (i > 0) {
      EXPECT_GE(ran[i]->start_ms, ran[i - 1]->start_ms);
    }
  }
  EXPECT_GE(long_prefill_steps, 3000 / 128);
}

// Every request's life is in the events, in order, and the worst gap names a stream and the
// step of its previous token.
TEST(LiveFeed, RequestEventsAndGapsAreRecorded) {
  FakeEngine eng;
  LoopCore core(eng, live_config());
  Driver d(core);
  const uint64_t a = d.submit(greedy(make_prompt(20, 1), 5));
  ASSERT_TRUE(d.run_until_done());
  auto slice = core.live()->read(0, 1000);
  std::vector<std::string> whats;
  uint64_t gaps = 0;
  for (const auto& r : slice.records) {
    for (const auto& e : r->events) {
      if (e.request == a) whats.push_back(e.what);
    }
    if (r->worst_gap.request == a) {
      ++gaps;
      EXPECT_LT(r->worst_gap.since_step, r->seq);
      EXPECT_GE(r->worst_gap.ms, 0);
    }
  }
  EXPECT_EQ(whats, (std::vector<std::string>{"admitted", "first_token", "finished"}));
  EXPECT_EQ(gaps, 4u);  // tokens 2..5 each end a gap
  auto st = core.status();
  EXPECT_TRUE(st.requests.empty());
}

// Parks and resumes under KV pressure are in the feed, in order per request, with their why;
// every parked request resumed before it finished.
TEST(LiveFeed, ParksAndResumesAreRecordedWithTheirReason) {
  FakeEngine eng(testing::small_blocks());
  SchedConfig c;
  c.parallel = 4;
  c.ctx = 1024;
  c.prefill_chunk = 64;
  c.mixed_prefill_chunk = 16;
  c.kv_ram_mb = 1;  // 16 blocks: four requests of 140 positions do not fit at once
  LoopCore core(eng, c);
  Driver d(core);
  for (int i = 0; i < 4; ++i) d.submit(greedy(make_prompt(40, i), 100));
  ASSERT_TRUE(d.run_until_done());
  std::map<uint64_t, std::vector<std::string>> life;
  int parks = 0;
  for (const auto& r : core.live()->read(0, 100000).records) {
    for (const auto& e : r->events) {
      life[e.request].push_back(e.what);
      if (e.what == "parked") {
        ++parks;
        EXPECT_EQ(e.detail.rfind("kv_pressure", 0), 0u) << e.detail;
        EXPECT_EQ(e.figures.prompt_tokens, 40);
      }
    }
  }
  EXPECT_EQ(static_cast<uint64_t>(parks), core.metrics().kv_preemptions_total);
  EXPECT_GT(parks, 0);
  for (const auto& [id, whats] : life) {
    ASSERT_FALSE(whats.empty());
    EXPECT_EQ(whats.front(), "admitted") << id;
    EXPECT_EQ(whats.back(), "finished") << id;
    int open = 0;
    for (const auto& w : whats) {
      if (w == "parked") {
        EXPECT_EQ(open++, 0) << id;
      }
      if (w == "resumed") {
        EXPECT_EQ(--open, 0) << id;
      }
    }
    EXPECT_EQ(open, 0) << id;
  }
}

}  // namespace
}  // namespace baton::sched
