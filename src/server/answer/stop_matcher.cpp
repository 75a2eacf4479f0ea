#include "server/answer/stop_matcher.h"

namespace baton::server {

StopMatcher::StopMatcher(std::shared_ptr<const StopSet> stops) : stops_(std::move(stops)) {
  if (stops_ && stops_->empty()) stops_.reset();
}

StopMatcher::StopMatcher(std::vector<std::string> stops)
    : StopMatcher(make_stop_set(std::move(stops))) {}

const std::string& StopMatcher::matched_string() const {
  static const std::string kNone;
  return matched() ? stops_->stop(matched_) : kNone;
}

std::string StopMatcher::push(const std::string& text) {
  if (matched()) return "";
  if (!stops_) return text;
  const size_t before = held_.size();
  held_ += text;
  for (size_t i = before; i < held_.size(); ++i) {
    state_ = stops_->next(state_, static_cast<unsigned char>(held_[i]));
    const int32_t m = stops_->match(state_);
    if (m < 0) continue;
    matched_ = m;
    const size_t start = i + 1 - stops_->stop(m).size();
    std::string out = held_.substr(0, start);
    held_.clear();
    return out;
  }
  // Only the text that may still begin a stop (the automaton's depth) stays held.
  const size_t keep = static_cast<size_t>(stops_->depth(state_));
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string StopMatcher::flush() {
  std::string out = matched() ? "" : held_;
  held_.clear();
  state_ = StopSet::kRoot;
  return out;
}

}  // namespace baton::server
