#pragma once
// Applies `stop` strings to streamed text: text that could still be the start of a stop string
// is held back until the next piece decides it, so a client never sees part of a stop string.
#include <string>
#include <vector>

namespace baton::server {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops);
  // Feeds newly decoded text; returns the text that is now safe to send. After a match, returns
  // the text before the stop string and ignores further input.
  std::string push(const std::string& text);
  // At the end of generation: the held-back text (nothing after a match).
  std::string flush();
  bool matched() const { return matched_; }
  // The stop string that matched (the earliest in the text), empty before a match.
  const std::string& matched_string() const { return matched_string_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool matched_ = false;
  std::string matched_string_;
};

}  // namespace baton::server
