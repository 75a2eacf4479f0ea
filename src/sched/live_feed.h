#pragma once
// The engine loop's recent history for live viewers (/dashboard and its event stream): one
// record per step saying which request got how many rows and how long the step took, with the
// request events of its boundary (admitted, parked, loaded from disk, finished, ...).
// A fixed-size ring of immutable records: the loop's push costs the same with no viewer or a
// hundred (viewers are cursors into the ring, not queues the loop fills), and a viewer that
// falls behind finds its records overwritten and is told how many it lost, instead of holding
// memory or the loop back.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace baton::sched {

// What one request did in a step.
struct LiveRow {
  uint64_t request = 0;
  int32_t decode_rows = 0;     // 1, or 1 + its drafted tokens
  int32_t prefill_tokens = 0;  // prompt positions computed
  int32_t position = 0;        // positions in its KV after the step
};

// A request's figures as of an event (-1: not known there), so that a viewer that joins late
// still knows the requests that ended before the status it first reads.
struct LiveFigures {
  int32_t prompt_tokens = -1;
  int32_t cached_tokens = -1;
  int32_t disk_tokens = -1;
  int32_t generated = -1;
  double ttft_ms = -1;
  double max_gap_ms = -1;
};

// A request's change of state, noted at the step boundary where it happened.
struct LiveEvent {
  uint64_t request = 0;
  std::string what;    // admitted, loading, loaded, first_token, parked, resumed, finished
  std::string detail;  // for a person: "prompt 3300 tokens, 0 cached", "kv_pressure", ...
  LiveFigures figures;
};

// The longest inter-token gap that ended in a step, and the step that produced the stream's
// previous token: the step that caused the gap is the longest one after it.
struct LiveGap {
  uint64_t request = 0;  // 0: no stream produced a second token in this step
  double ms = 0;
  uint64_t since_step = 0;
};

struct StepRecord {
  uint64_t seq = 0;
  double start_ms = 0;  // since the feed was made (LiveFeed::now_ms's clock)
  double ms = 0;        // 0 with no rows: a boundary with events but no forward pass
  double predicted_ms = 0;
  std::vector<LiveRow> rows;
  std::vector<LiveEvent> events;
  LiveGap worst_gap;
};

class LiveFeed {
 public:
  // --live-steps: about three minutes of 20 ms steps; a record is a few hundred bytes.
  static constexpr size_t kDefaultCapacity = 8192;
  explicit LiveFeed(size_t capacity = kDefaultCapacity);

  using Clock = std::chrono::steady_clock;
  double ms_since_start(Clock::time_point t) const;
  double now_ms() const { return ms_since_start(Clock::now()); }

  // Thread-safe, without the lock (the loop reads it for every token it samples): the seq the
  // next push will get.
  uint64_t next_seq() const { return next_.load(std::memory_order_acquire); }
  void push(StepRecord r);  // assigns r.seq

  struct Slice {
    std::vector<std::shared_ptr<const StepRecord>> records;  // in seq order
    uint64_t lost = 0;  // records from `from` on that were overwritten before this read
    uint64_t next = 0;  // the `from` of the next read
  };
  // Thread-safe: the records from seq `from` on, at most `max` of them. Copies pointers under
  // the lock, so a reader holds the loop's push back for no longer than that.
  Slice read(uint64_t from, size_t max) const;
  size_t capacity() const { return ring_.size(); }

 private:
  const Clock::time_point start_ = Clock::now();
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<const StepRecord>> ring_;
  std::atomic<uint64_t> next_{0};  // written under mu_
};

}  // namespace baton::sched
