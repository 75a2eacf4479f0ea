#pragma once
// What every format does alike once it has cut the text into content and calls: assembles a
// ParsedOutput with one whitespace rule, and finds markers that the text may have only begun.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "toolcall/output_format.h"

namespace baton::toolcall {

// Whitespace that touches a call (before its start marker, between calls, after the last one)
// is markup layout, not content: it is dropped. While streaming, trailing whitespace of the
// content is held back until something other than a call follows it.
class OutputBuilder {
 public:
  explicit OutputBuilder(bool final) : final_(final) {}
  void add_content(std::string_view text);
  void add_call(ToolCall call, bool open = false);
  ParsedOutput take();

 private:
  bool final_;
  bool after_call_ = false;
  std::string pending_ws_;
  ParsedOutput out_;
};

// The start of the last place where `text` ends with a proper prefix of `marker` (so that the
// marker may be completed by more text); text.size() when none.
size_t partial_marker_start(std::string_view text, std::string_view marker);

// The first full occurrence at or after `from` of any of `markers`, as {position, marker
// index}; {npos, 0} when none.
struct MarkerHit {
  size_t pos = std::string_view::npos;
  size_t which = 0;
  bool found() const { return pos != std::string_view::npos; }
};
MarkerHit find_first(std::string_view text, size_t from, const std::vector<std::string>& markers);

// In a non-final parse, the end of the content that is certain: the text before `limit` minus
// a trailing proper prefix of any marker. In a final parse, `limit` itself.
size_t certain_end(std::string_view text, size_t limit, const std::vector<std::string>& markers,
                   bool final);

// Whether `s` (the end of a streamed text) is a proper prefix of `marker`, so more text may
// still make it one.
inline bool may_become(std::string_view s, std::string_view marker) {
  return s.size() < marker.size() && marker.starts_with(s);
}

// The loop of the formats whose markup starts at a marker: content from `pos` up to the first of
// `opens` (held back while the text may end in the start of one), then `take` reads the markup
// at the hit into `out` and returns where content goes on, or npos when the rest of the text
// waits or was consumed.
void scan_markers(std::string_view text, size_t pos, bool final,
                  const std::vector<std::string>& opens, OutputBuilder& out,
                  const std::function<size_t(const MarkerHit& hit)>& take);

}  // namespace baton::toolcall
