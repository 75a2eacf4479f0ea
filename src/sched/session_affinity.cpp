#include "sched/session_affinity.h"

#include <algorithm>

namespace baton::sched {

void SessionAffinity::record(const std::string& session, int32_t prompt, int32_t cached,
                             Clock::time_point now) {
  if (session.empty() || capacity_ == 0) return;
  auto it = by_id_.find(session);
  const bool returning = it != by_id_.end();
  if (returning) {
    order_.splice(order_.begin(), order_, it->second);
  } else {
    order_.push_front(Entry{SessionFigures{session}, now});
    by_id_.emplace(session, order_.begin());
    if (order_.size() > capacity_) {
      by_id_.erase(order_.back().figures.id);
      order_.pop_back();
    }
  }
  Entry& e = order_.front();
  e.last_seen = now;
  const auto p = static_cast<uint64_t>(std::max(prompt, 0));
  const auto c = static_cast<uint64_t>(std::clamp(cached, 0, std::max(prompt, 0)));
  ++e.figures.requests;
  e.figures.prompt_tokens += p;
  e.figures.cached_tokens += c;
  AffinityTotals::Side& side = returning ? totals_.returning : totals_.fresh;
  ++side.requests;
  side.prompt_tokens += p;
  side.cached_tokens += c;
  totals_.sessions = static_cast<int64_t>(order_.size());
}

std::vector<SessionFigures> SessionAffinity::recent(size_t n, Clock::time_point now) const {
  std::vector<SessionFigures> out;
  for (auto it = order_.begin(); it != order_.end() && out.size() < n; ++it) {
    SessionFigures f = it->figures;
    f.idle_s = std::chrono::duration<double>(now - it->last_seen).count();
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace baton::sched
