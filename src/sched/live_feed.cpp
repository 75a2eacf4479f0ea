#include "sched/live_feed.h"

#include <algorithm>

namespace baton::sched {

LiveFeed::LiveFeed(size_t capacity) : ring_(std::max<size_t>(1, capacity)) {}

double LiveFeed::ms_since_start(Clock::time_point t) const {
  return std::chrono::duration<double, std::milli>(t - start_).count();
}

void LiveFeed::push(StepRecord r) {
  // Built outside the lock; the old record it replaces is freed outside it too.
  auto record = std::make_shared<StepRecord>(std::move(r));
  std::shared_ptr<const StepRecord> old;
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t seq = next_.load(std::memory_order_relaxed);
  record->seq = seq;
  old = std::move(ring_[seq % ring_.size()]);
  ring_[seq % ring_.size()] = std::move(record);
  next_.store(seq + 1, std::memory_order_release);
}

LiveFeed::Slice LiveFeed::read(uint64_t from, size_t max) const {
  Slice s;
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t next = next_.load(std::memory_order_relaxed);
  const uint64_t oldest = next > ring_.size() ? next - ring_.size() : 0;
  if (from > next) from = next;  // a cursor from before a restart: start at the end
  if (from < oldest) {
    s.lost = oldest - from;
    from = oldest;
  }
  const uint64_t end = std::min<uint64_t>(next, from + max);
  s.records.reserve(static_cast<size_t>(end - from));
  for (uint64_t q = from; q < end; ++q) s.records.push_back(ring_[q % ring_.size()]);
  s.next = end;
  return s;
}

}  // namespace baton::sched
