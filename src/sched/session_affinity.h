#pragma once
// Per-session prefix-cache figures, so an operator can see whether a proxy in front keeps each
// conversation on one replica. A request names its session (the x-session-affinity header and
// the agents' own, or prompt_cache_key); a session this replica has served before is
// "returning", and with working affinity its requests find most of their prompt cached. A
// session seen for the first time (or forgotten) is "new": a conversation's later turn arriving
// as new is what a proxy that does not pin sessions looks like.
//
// The table is bounded (least recently seen sessions are forgotten), so /metrics carries only
// totals by new/returning, never a label per session; /status lists the recent sessions.
#include <chrono>
#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

namespace baton::sched {

struct SessionFigures {
  std::string id;
  uint64_t requests = 0;
  uint64_t prompt_tokens = 0;
  uint64_t cached_tokens = 0;  // prompt tokens served from the RAM or disk cache
  double idle_s = 0;           // since its last request ended (filled in by recent())
};

struct AffinityTotals {
  struct Side {
    uint64_t requests = 0;
    uint64_t prompt_tokens = 0;
    uint64_t cached_tokens = 0;
  };
  Side fresh;            // the session's first request here (or after it was forgotten)
  Side returning;        // a session this replica has served before
  int64_t sessions = 0;  // sessions in the table now
};

class SessionAffinity {
 public:
  using Clock = std::chrono::steady_clock;
  explicit SessionAffinity(size_t capacity = 1024) : capacity_(capacity) {}

  // A request of `session` ended with `cached` of its `prompt` tokens served from the cache.
  // Requests without a session are not counted.
  void record(const std::string& session, int32_t prompt, int32_t cached, Clock::time_point now);
  // The `n` sessions seen most recently, most recent first.
  std::vector<SessionFigures> recent(size_t n, Clock::time_point now) const;
  const AffinityTotals& totals() const { return totals_; }

 private:
  struct Entry {
    SessionFigures figures;
    Clock::time_point last_seen;
  };
  size_t capacity_;
  std::list<Entry> order_;  // most recent first
  std::unordered_map<std::string, std::list<Entry>::iterator> by_id_;
  AffinityTotals totals_;
};

}  // namespace baton::sched
