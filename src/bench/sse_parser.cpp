#include "bench/sse_parser.h"

namespace baton::bench {

std::vector<SseEvent> SseParser::feed(std::string_view bytes) {
  std::vector<SseEvent> out;
  for (char c : bytes) {
    // A CR ends a line; an LF right after it belongs to the same line ending.
    if (c == '\n' && last_was_cr_) {
      last_was_cr_ = false;
      continue;
    }
    last_was_cr_ = (c == '\r');
    if (c == '\r' || c == '\n') {
      line(pending_, out);
      pending_.clear();
    } else {
      pending_.push_back(c);
    }
  }
  return out;
}

std::vector<SseEvent> SseParser::finish() {
  std::vector<SseEvent> out;
  if (!pending_.empty()) {
    line(pending_, out);
    pending_.clear();
  }
  dispatch(out);
  return out;
}

void SseParser::line(std::string_view l, std::vector<SseEvent>& out) {
  ++lines_;
  if (l.empty()) {
    dispatch(out);
    return;
  }
  if (l.front() == ':') {
    ++comments_;
    return;
  }
  auto colon = l.find(':');
  std::string_view field = l.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = l.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (has_data_) data_.push_back('\n');
    data_.append(value);
    has_data_ = true;
  } else if (field == "event") {
    event_ = std::string(value);
  }
  // id:, retry: and unknown fields do not matter to a benchmark client.
}

void SseParser::dispatch(std::vector<SseEvent>& out) {
  if (has_data_) {
    if (data_ == "[DONE]") {
      done_ = true;
    } else {
      out.push_back({event_, data_});
    }
  }
  event_.clear();
  data_.clear();
  has_data_ = false;
}

}  // namespace baton::bench
