#pragma once
// Applies `stop` strings to streamed text: text that could still be the start of a stop string
// is held back until the next piece decides it, so a client never sees part of a stop string.
// The stops and their automaton are shared (StopSet); a matcher holds only its position in it
// and the held-back text (at most the longest stop's bytes).
#include <memory>
#include <string>
#include <vector>

#include "server/answer/stop_set.h"

namespace baton::server {

class StopMatcher {
 public:
  // `stops` may be null: no stop strings.
  explicit StopMatcher(std::shared_ptr<const StopSet> stops);
  explicit StopMatcher(std::vector<std::string> stops);
  // Feeds newly decoded text; returns the text that is now safe to send. After a match, returns
  // the text before the stop string and ignores further input. The first stop to end in the
  // text wins (of two ending at the same byte, the longer), however the text is split.
  std::string push(const std::string& text);
  // At the end of generation: the held-back text (nothing after a match).
  std::string flush();
  bool matched() const { return matched_ >= 0; }
  // The stop string that matched, empty before a match.
  const std::string& matched_string() const;

 private:
  std::shared_ptr<const StopSet> stops_;
  int32_t state_ = StopSet::kRoot;
  std::string held_;
  int32_t matched_ = -1;
};

}  // namespace baton::server
