#include "toolcall/loose_formats.h"
#include "toolcall/loose_value.h"
#include "toolcall/markup_scan.h"

namespace baton::toolcall {

using markup::Block;
using markup::BlockResult;
using markup::Cursor;
using markup::Match;

namespace {

constexpr std::string_view kCallOpen = "<|tool_call>";
constexpr std::string_view kCallClose = "<tool_call|>";
constexpr std::string_view kChannelOpen = "<|channel>";
constexpr std::string_view kChannelClose = "<channel|>";

// The template writes strings between <|"|> tokens without escaping anything, object keys bare,
// and anything else (None) with Python's str().
const loose::Dialect& dialect() {
  static const loose::Dialect d{{{"<|\"|>", "<|\"|>", loose::Escapes::none}},
                                true,
                                {{"None", "null"}, {"True", "true"}, {"False", "false"}}};
  return d;
}

Block from(json::Status s) {
  return s == json::Status::partial ? Block::incomplete : Block::malformed;
}

// <|tool_call>call:NAME{…}<tool_call|>. Once the token is there, anything else is a broken call
// (malformed, so that it comes back raw at the end) rather than text.
BlockResult call(std::string_view text, size_t start, ParsedOutput& out) {
  Cursor c{text, start + kCallOpen.size()};
  if (Match m = c.literal("call:"); m != Match::yes) return {markup::broken(m)};
  size_t name_end = loose::word_end(text, c.pos);
  if (name_end == text.size()) return {Block::incomplete};
  if (name_end == c.pos || text[name_end] != '{') return {Block::malformed};
  out.calls.push_back({"", std::string(text.substr(c.pos, name_end - c.pos)), ""});
  out.last_call_open = true;
  loose::Result r = loose::to_json(text, name_end, dialect(), out.calls.back().arguments);
  if (r.status != json::Status::complete) return {from(r.status)};
  out.last_call_open = false;
  c.pos = r.end;
  Match m = c.literal(kCallClose);
  if (m == Match::yes) return {Block::done, c.pos};
  return {markup::broken(m)};
}

// <|channel>thought\n…<channel|>: reasoning, streamed without the channel's name line. An
// unclosed channel is reasoning to the end of the text.
BlockResult channel(std::string_view text, size_t start, bool final, ParsedOutput& out) {
  size_t body = start + kChannelOpen.size();
  size_t close = text.find(kChannelClose, body);
  size_t stop = close == markup::npos ? text.size() : close;
  size_t line = text.find('\n', body);
  if (line == markup::npos || line >= stop) {  // no name line: the whole body is reasoning
    if (close == markup::npos && !final) return {Block::incomplete};
    line = body - 1;
  }
  std::string_view thought = text.substr(line + 1, stop - line - 1);
  if (close != markup::npos || final) {
    out.reasoning += markup::trim(thought);
    return {Block::done, close == markup::npos ? text.size() : close + kChannelClose.size()};
  }
  thought.remove_suffix(markup::partial_suffix(thought, kChannelClose));
  thought = markup::trim(thought);
  out.reasoning += thought.substr(0, thought.size() - markup::incomplete_utf8_suffix(thought));
  return {Block::incomplete};
}

}  // namespace

ParsedOutput Gemma4Format::parse(std::string_view text, bool final) const {
  return markup::scan_blocks(text, final, {std::string(kCallOpen), std::string(kChannelOpen)},
                             [](std::string_view t, size_t start, bool fin, ParsedOutput& out) {
                               return t.substr(start).starts_with(kCallOpen)
                                          ? call(t, start, out)
                                          : channel(t, start, fin, out);
                             });
}

std::vector<std::string> Gemma4Format::markers() const {
  return {std::string(kCallOpen), std::string(kCallClose), "<|\"|>", std::string(kChannelOpen),
          std::string(kChannelClose)};
}

}  // namespace baton::toolcall
