#pragma once
// Incremental Server-Sent Events parser: bytes go in as the network delivers them (split at any
// boundary), complete events come out. Follows the WHATWG event-stream rules that matter for
// OpenAI-style streams: "data:" lines joined by '\n', ':' comment lines, CRLF / LF / CR endings,
// an event ends at a blank line, and "data: [DONE]" marks the end of the stream.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace baton::bench {

struct SseEvent {
  std::string event;  // the "event:" field, empty for the default "message"
  std::string data;
};

class SseParser {
 public:
  // Feeds bytes; returns the events completed by them (in order).
  std::vector<SseEvent> feed(std::string_view bytes);
  // Completes a final event that the server did not terminate with a blank line.
  std::vector<SseEvent> finish();

  bool done() const { return done_; }                 // saw data: [DONE]
  std::size_t comments() const { return comments_; }  // ':' lines seen so far
  bool any_line() const { return lines_ > 0; }        // any complete line seen

 private:
  void line(std::string_view l, std::vector<SseEvent>& out);
  void dispatch(std::vector<SseEvent>& out);

  std::string pending_;  // bytes of the current, incomplete line
  bool last_was_cr_ = false;
  std::string event_, data_;
  bool has_data_ = false;
  bool done_ = false;
  std::size_t comments_ = 0, lines_ = 0;
};

}  // namespace baton::bench
