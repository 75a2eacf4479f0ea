#include "toolcall/markup_text.h"

#include <algorithm>
#include <cstdio>

#include "toolcall/json_scan.h"

namespace baton::toolcall::markup {

size_t partial_suffix(std::string_view text, std::string_view literal) {
  size_t longest = std::min(text.size(), literal.empty() ? 0 : literal.size() - 1);
  for (size_t n = longest; n > 0; --n)
    if (text.substr(text.size() - n) == literal.substr(0, n)) return n;
  return 0;
}

size_t incomplete_utf8_suffix(std::string_view text) {
  // Look back at most 3 bytes for the lead byte of the last sequence.
  for (size_t back = 1; back <= 3 && back <= text.size(); ++back) {
    auto c = static_cast<unsigned char>(text[text.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    size_t need = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string_view trim_left(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  return s;
}

std::string_view trim(std::string_view s) {
  return trim_left(trim_right(s));
}

size_t skip_space(std::string_view text, size_t pos) {
  while (pos < text.size() && is_space(text[pos])) ++pos;
  return pos;
}

void append_json_escaped(std::string& out, std::string_view s) {
  for (char ch : s) {
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(ch));
          out += buf;
        } else {
          out += ch;
        }
    }
  }
}

std::string_view first_word(std::string_view s) {
  return s.substr(0, std::min(s.find_first_of(" \t\n"), s.find("<|")));
}

BodyEnd find_body_end(std::string_view text, size_t pos, std::span<const std::string_view> ends,
                      std::string_view kept) {
  BodyEnd best;
  for (auto end : ends)
    if (auto at = text.find(end, pos); at < best.at) best = {at, end == kept ? 0 : end.size()};
  return best;
}

BodyEnd find_json_body_end(std::string_view text, size_t pos,
                           std::span<const std::string_view> ends, std::string_view kept) {
  const json::Scan value = json::scan_value(text, pos);
  switch (value.status) {
    case json::Status::complete:
      return find_body_end(text, value.end, ends, kept);
    case json::Status::partial:
      return {};  // the value is still being written: nothing in it is an end
    case json::Status::invalid:
      break;
  }
  return find_body_end(text, pos, ends, kept);  // not JSON: the first end marker ends it
}

BodyEnd find_section_body_end(std::string_view text, size_t pos,
                              std::span<const std::string_view> ends, std::string_view kept,
                              std::string_view section_open, std::string_view section_close) {
  const std::string_view body = trim_left(text.substr(pos));
  if (!body.starts_with(section_open)) return find_body_end(text, pos, ends, kept);
  const size_t close = text.find(section_close, text.size() - body.size() + section_open.size());
  if (close == npos) return {};
  return find_body_end(text, close + section_close.size(), ends, kept);
}

size_t body_held_back(std::string_view body, std::span<const std::string_view> ends) {
  size_t held = 0;
  for (auto end : ends) held = std::max(held, partial_suffix(body, end));
  body.remove_suffix(held);
  return held + incomplete_utf8_suffix(body);
}

std::string json_quote(std::string_view s) {
  std::string out = "\"";
  append_json_escaped(out, s);
  out += '"';
  return out;
}

}  // namespace baton::toolcall::markup
