// The engine loop's side of the live feed (live_feed.h): request events are noted where they
// happen and go out with the record of the step that follows them.
#include <algorithm>
#include <utility>

#include "sched/loop_core.h"

namespace baton::sched {

void LoopCore::note(const Request& r, const char* what, std::string detail) {
  LiveFigures f;
  f.prompt_tokens = r.n_prompt;
  f.cached_tokens = r.cached_tokens;
  f.disk_tokens = r.disk_tokens;
  f.generated = r.generated;
  if (r.first_token.time_since_epoch().count() != 0) {
    f.ttft_ms = ms_between(r.arrival, r.first_token);
    f.max_gap_ms = r.max_gap_ms;
  }
  live_events_.push_back({r.id, what, std::move(detail), f});
}

void LoopCore::note_gap(Request& r, double gap_ms) {
  r.max_gap_ms = std::max(r.max_gap_ms, gap_ms);
  if (gap_ms > live_gap_.ms) live_gap_ = {r.id, gap_ms, r.last_token_step};
}

void LoopCore::record_step(Clock::time_point start, Clock::time_point end, double predicted_ms,
                           std::vector<LiveRow> rows) {
  StepRecord rec;
  rec.start_ms = live_->ms_since_start(start);
  rec.ms = ms_between(start, end);
  rec.predicted_ms = predicted_ms;
  rec.rows = std::move(rows);
  rec.events = std::move(live_events_);
  rec.worst_gap = live_gap_;
  live_events_.clear();
  live_gap_ = {};
  live_->push(std::move(rec));
}

void LoopCore::flush_notes() {
  if (live_events_.empty()) return;
  const auto now = Clock::now();
  record_step(now, now, 0, {});
}

}  // namespace baton::sched
