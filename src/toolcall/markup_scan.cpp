#include "toolcall/markup_scan.h"

#include <algorithm>

namespace baton::toolcall::markup {

Match Cursor::exact(std::string_view lit) {
  std::string_view rest = text.substr(std::min(pos, text.size()));
  if (rest.substr(0, lit.size()) == lit) {
    pos += lit.size();
    return Match::yes;
  }
  if (rest.size() < lit.size() && lit.substr(0, rest.size()) == rest) return Match::partial;
  return Match::no;
}

Match Cursor::literal(std::string_view lit) {
  size_t save = pos;
  pos = skip_space(text, pos);
  Match m = exact(lit);
  if (m != Match::yes) pos = save;
  if (m == Match::no && skip_space(text, save) == text.size()) return Match::partial;
  return m;
}

Match Cursor::literals(const std::vector<std::string>& pieces) {
  size_t save = pos;
  for (const auto& p : pieces) {
    Match m = literal(p);
    if (m != Match::yes) {
      pos = save;
      return m;
    }
  }
  return Match::yes;
}

BlockResult read_section(Cursor& c, bool final, const std::vector<std::string>& open,
                         const std::vector<std::string>& close,
                         const std::function<Block()>& call) {
  if (open.empty()) {
    const Block b = call();
    return {b, c.pos};
  }
  Match m = c.literals(open);
  if (m != Match::yes) return {unopened(m), 0};
  for (bool first = true;; first = false) {
    m = c.literals(close);
    if (m == Match::yes) return {Block::done, c.pos};
    if (final && !first && skip_space(c.text, c.pos) == c.text.size())
      return {Block::done, c.text.size()};
    if (m == Match::partial) return {Block::incomplete, 0};
    Block b = call();
    if (b != Block::done) return {b == Block::not_markup && !first ? Block::malformed : b, 0};
  }
}

Block close_rest(Cursor& c, bool final, const std::vector<std::string>& close) {
  for (size_t i = 1; i < close.size(); ++i) {
    Match m = c.literal(close[i]);
    if (m == Match::no || (m == Match::partial && final)) break;
    if (m == Match::partial) return Block::incomplete;
  }
  return Block::done;
}

namespace {

struct Opener {
  size_t at = npos;  // where the earliest complete opener starts
  size_t held = 0;   // when none: bytes at the end that may still become one
};

Opener find_opener(std::string_view text, size_t pos, const std::vector<std::string>& openers) {
  Opener o;
  for (const auto& lit : openers) o.at = std::min(o.at, text.find(lit, pos));
  if (o.at == npos)
    for (const auto& lit : openers)
      o.held = std::max(o.held, partial_suffix(text.substr(pos), lit));
  return o;
}

// Content of a segment that more text may still extend: stops before trailing whitespace and a
// split character.
std::string_view streamable(std::string_view seg) {
  seg = trim_right(seg);
  return seg.substr(0, seg.size() - incomplete_utf8_suffix(seg));
}

}  // namespace

ParsedOutput scan_blocks(std::string_view text, bool final, const std::vector<std::string>& openers,
                         const BlockParser& parse_block) {
  ParsedOutput out;
  size_t pos = 0;
  bool after_block = true;  // whitespace at the start and right after a block is dropped
  while (true) {
    Opener o = find_opener(text, pos, openers);
    std::string_view seg = text.substr(pos, (o.at == npos ? text.size() : o.at) - pos);
    if (after_block) seg = trim_left(seg);
    if (o.at == npos) {
      if (!final) seg = streamable(seg.substr(0, seg.size() - std::min(seg.size(), o.held)));
      out.content += seg;
      break;
    }
    size_t calls_before = out.calls.size();
    BlockResult r = parse_block(text, o.at, final, out);
    if (r.status == Block::incomplete && final) r.status = Block::malformed;
    if (r.status == Block::done) {
      out.content += trim_right(seg);
      out.last_call_open = false;
      pos = r.end;
      after_block = true;
      continue;
    }
    if (r.status == Block::not_markup) {
      // The opener is text: keep it and look for the next one after its first byte.
      out.calls.resize(calls_before);
      out.content += seg;
      out.content += text[o.at];
      pos = o.at + 1;
      after_block = false;
      continue;
    }
    if (!final) {  // incomplete, or broken after its calls were reported: wait for the end
      out.content += streamable(seg);
      break;
    }
    out.calls.resize(calls_before);  // malformed: everything from here is content, raw
    out.content += seg;
    out.content += text.substr(o.at);
    break;
  }
  if (final) out.last_call_open = false;
  return out;
}

}  // namespace baton::toolcall::markup
