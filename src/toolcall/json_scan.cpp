#include "toolcall/json_scan.h"

#include <nlohmann/json.hpp>
#include <vector>

#include "util/json_depth.h"

namespace baton::toolcall::json {
namespace {

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool is_number_char(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

// One of true/false/null at `pos`, or a prefix of one cut by the end of the text.
Scan scan_literal(std::string_view text, size_t pos) {
  for (std::string_view word : {"true", "false", "null"}) {
    if (text[pos] != word[0]) continue;
    size_t n = std::min(word.size(), text.size() - pos);
    for (size_t k = 0; k < n; ++k) {
      // At the first wrong letter: every shorter prefix was a valid partial literal.
      if (text[pos + k] != word[k]) return {Status::invalid, pos + k};
    }
    if (n < word.size()) return {Status::partial, text.size()};
    return {Status::complete, pos + n};
  }
  return {Status::invalid, pos};
}

Scan scan_number(std::string_view text, size_t pos) {
  size_t i = pos;
  while (i < text.size() && is_number_char(text[i])) ++i;
  if (i == text.size()) return {Status::partial, i};
  return {Status::complete, i};
}

// A scalar (string, number, literal) at `pos`; containers are handled by scan_value's stack.
Scan scan_scalar(std::string_view text, size_t pos) {
  char c = text[pos];
  if (c == '"') return scan_string(text, pos);
  if (c == '-' || (c >= '0' && c <= '9')) return scan_number(text, pos);
  return scan_literal(text, pos);
}

enum class Expect { value, value_or_close, key, key_or_close, colon, comma_or_close };

}  // namespace

size_t skip_ws(std::string_view text, size_t pos) {
  while (pos < text.size() &&
         (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\n' || text[pos] == '\r'))
    ++pos;
  return pos;
}

Scan scan_string(std::string_view text, size_t pos) {
  if (pos >= text.size() || text[pos] != '"') return {Status::invalid, pos};
  size_t i = pos + 1;
  while (i < text.size()) {
    char c = text[i];
    if (c == '"') return {Status::complete, i + 1};
    if (static_cast<unsigned char>(c) < 0x20) return {Status::invalid, i};
    if (c != '\\') {
      ++i;
      continue;
    }
    if (i + 1 >= text.size()) return {Status::partial, text.size()};
    char e = text[i + 1];
    if (e == 'u') {
      for (size_t k = i + 2; k < i + 6; ++k) {
        if (k >= text.size()) return {Status::partial, text.size()};
        if (!is_hex(text[k])) return {Status::invalid, k};
      }
      i += 6;
    } else if (std::string_view("\"\\/bfnrt").find(e) != std::string_view::npos) {
      i += 2;
    } else {
      return {Status::invalid, i + 1};
    }
  }
  return {Status::partial, text.size()};
}

Scan scan_value(std::string_view text, size_t pos) {
  std::vector<char> stack;  // the closers of the open containers
  Expect expect = Expect::value;
  size_t i = pos;
  while (true) {
    i = skip_ws(text, i);
    if (i >= text.size()) return {Status::partial, text.size()};
    char c = text[i];
    bool value_done = false;
    switch (expect) {
      case Expect::value_or_close:
      case Expect::value:
        if (expect == Expect::value_or_close && c == ']') {
          stack.pop_back();
          ++i;
          value_done = true;
        } else if (c == '{' || c == '[') {
          stack.push_back(c == '{' ? '}' : ']');
          expect = c == '{' ? Expect::key_or_close : Expect::value_or_close;
          ++i;
        } else {
          Scan s = scan_scalar(text, i);
          if (s.status != Status::complete) return s;
          i = s.end;
          value_done = true;
        }
        break;
      case Expect::key_or_close:
      case Expect::key:
        if (expect == Expect::key_or_close && c == '}') {
          stack.pop_back();
          ++i;
          value_done = true;
        } else {
          Scan s = scan_string(text, i);
          if (s.status != Status::complete) return s;
          i = s.end;
          expect = Expect::colon;
        }
        break;
      case Expect::colon:
        if (c != ':') return {Status::invalid, i};
        ++i;
        expect = Expect::value;
        break;
      case Expect::comma_or_close:
        if (c == ',') {
          expect = stack.back() == '}' ? Expect::key : Expect::value;
          ++i;
        } else if (c == stack.back()) {
          stack.pop_back();
          ++i;
          value_done = true;
        } else {
          return {Status::invalid, i};
        }
        break;
    }
    if (value_done) {
      if (stack.empty()) return {Status::complete, i};
      expect = Expect::comma_or_close;
    }
  }
}

std::optional<std::string> decode_string(std::string_view token) {
  auto j = util::parse_json_bounded<nlohmann::json>(token);
  if (!j.is_string()) return std::nullopt;
  return j.get<std::string>();
}

bool is_object(std::string_view text) {
  auto j = util::parse_json_bounded<nlohmann::json>(text);
  return j.is_object();
}

}  // namespace baton::toolcall::json
