#include "toolcall/loose_value.h"

#include <nlohmann/json.hpp>

#include "toolcall/markup_text.h"
#include "util/json_depth.h"
#include "util/utf8.h"

namespace baton::toolcall::loose {

using json::Status;

namespace {

constexpr int kMaxDepth = util::kMaxJsonDepth;  // deeper nesting is not a tool's arguments

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.' || static_cast<unsigned char>(c) >= 0x80;
}

bool is_number_char(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

int hex_value(std::string_view s) {
  int v = 0;
  for (char c : s) {
    int d = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

// Whether `text` from `pos` is `lit` (yes), a beginning of it cut by the end (partial), or not.
Status starts(std::string_view text, size_t pos, std::string_view lit) {
  std::string_view rest = text.substr(pos);
  if (rest.substr(0, lit.size()) == lit) return Status::complete;
  return rest.size() < lit.size() && lit.substr(0, rest.size()) == rest ? Status::partial
                                                                        : Status::invalid;
}

class Converter {
 public:
  Converter(std::string_view text, const Dialect& d, std::string& out)
      : text_(text), d_(d), out_(out) {}

  Result value(size_t pos, int depth) {
    pos = json::skip_ws(text_, pos);
    if (pos >= text_.size()) return {Status::partial, text_.size()};
    if (depth > kMaxDepth) return {Status::invalid, pos};
    char c = text_[pos];
    if (c == '{' || c == '[') return container(pos, depth);
    if (c == '-' || (c >= '0' && c <= '9')) return number(pos);
    for (const auto& q : d_.quotes) {
      Status s = starts(text_, pos, q.open);
      if (s == Status::complete) return string(pos, q);
      if (s == Status::partial) return {Status::partial, text_.size()};
    }
    return word(pos);
  }

 private:
  // An object or array: members are appended as they complete, the value streams.
  Result container(size_t pos, int depth) {
    bool object = text_[pos] == '{';
    char close = object ? '}' : ']';
    out_ += text_[pos++];
    for (bool first = true;; first = false) {
      pos = json::skip_ws(text_, pos);
      if (pos >= text_.size()) return {Status::partial, pos};
      if (text_[pos] == close) {
        out_ += close;
        return {Status::complete, pos + 1};
      }
      if (!first) {
        if (text_[pos] != ',') return {Status::invalid, pos};
        pos = json::skip_ws(text_, pos + 1);
        if (pos >= text_.size()) return {Status::partial, pos};
        if (text_[pos] == close) continue;  // a trailing comma, as Python allows
        out_ += ", ";
      }
      if (object) {
        Result k = key(pos);
        if (k.status != Status::complete) return k;
        pos = json::skip_ws(text_, k.end);
        if (pos >= text_.size()) return {Status::partial, pos};
        if (text_[pos] != ':') return {Status::invalid, pos};
        out_ += ": ";
        ++pos;
      }
      Result v = value(pos, depth + 1);
      if (v.status != Status::complete) return v;
      pos = v.end;
    }
  }

  Result key(size_t pos) {
    for (const auto& q : d_.quotes) {
      Status s = starts(text_, pos, q.open);
      if (s == Status::complete) return string(pos, q);
      if (s == Status::partial) return {Status::partial, text_.size()};
    }
    size_t end = word_end(text_, pos);
    if (!d_.bare_keys || end == pos) return {Status::invalid, pos};
    if (end == text_.size()) return {Status::partial, end};  // the key may go on
    out_ += markup::json_quote(text_.substr(pos, end - pos));
    return {Status::complete, end};
  }

  Result number(size_t pos) {
    size_t end = pos;
    while (end < text_.size() && is_number_char(text_[end])) ++end;
    if (end == text_.size()) return {Status::partial, end};  // more digits may follow
    std::string_view token = text_.substr(pos, end - pos);
    auto parsed = util::parse_json_bounded<nlohmann::json>(token);
    if (parsed.is_discarded() || !parsed.is_number()) return {Status::invalid, pos};
    out_ += token;
    return {Status::complete, end};
  }

  Result word(size_t pos) {
    static const std::pair<std::string, std::string> kJson[] = {
        {"true", "true"}, {"false", "false"}, {"null", "null"}};
    size_t end = word_end(text_, pos);
    std::string_view w = text_.substr(pos, end - pos);
    bool prefix = false;
    auto match = [&](const std::pair<std::string, std::string>& entry) {
      if (w == entry.first && end < text_.size()) {
        out_ += entry.second;
        return true;
      }
      prefix = prefix || (end == text_.size() && entry.first.starts_with(w));
      return false;
    };
    for (const auto& e : kJson)
      if (match(e)) return {Status::complete, end};
    for (const auto& e : d_.words)
      if (match(e)) return {Status::complete, end};
    return {prefix ? Status::partial : Status::invalid, prefix ? end : pos};
  }

  Result string(size_t pos, const Quote& q);

  std::string_view text_;
  const Dialect& d_;
  std::string& out_;
};

// Decodes the escape at text[i] ('\\'); returns the bytes consumed, 0 when the text ends inside
// it.
size_t decode_escape(std::string_view text, size_t i, Escapes mode, std::string& value) {
  if (i + 1 >= text.size()) return 0;
  char e = text[i + 1];
  if (e == '\\' || e == '\'' || e == '"') {
    value += e;
    return 2;
  }
  if (mode == Escapes::quotes) {
    value += '\\';  // not an escape in this dialect: the backslash is text
    return 1;
  }
  static constexpr std::string_view kFrom = "nrtbf/", kTo = "\n\r\t\b\f/";
  if (auto at = kFrom.find(e); at != std::string_view::npos) {
    value += kTo[at];
    return 2;
  }
  if (e != 'u') {
    value += '\\';
    return 1;
  }
  if (i + 6 > text.size()) return 0;
  int cp = hex_value(text.substr(i + 2, 4));
  if (cp < 0) {
    value += '\\';
    return 1;
  }
  if (cp >= 0xD800 && cp < 0xDC00) {  // a high surrogate: its low half follows
    if (i + 12 > text.size()) return 0;
    int low = text.substr(i + 6, 2) == "\\u" ? hex_value(text.substr(i + 8, 4)) : -1;
    if (low >= 0xDC00 && low < 0xE000) {
      util::append_utf8(value, 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00));
      return 12;
    }
  }
  util::append_utf8(value, static_cast<uint32_t>(cp));
  return 6;
}

Result Converter::string(size_t pos, const Quote& q) {
  size_t i = pos + q.open.size();
  std::string value;
  out_ += '"';
  while (i < text_.size()) {
    if (text_.compare(i, q.close.size(), q.close) == 0) {
      markup::append_json_escaped(out_, value);
      out_ += '"';
      return {Status::complete, i + q.close.size()};
    }
    if (text_[i] == '\\' && q.escapes != Escapes::none) {
      size_t n = decode_escape(text_, i, q.escapes, value);
      if (n == 0) break;
      i += n;
      continue;
    }
    value += text_[i++];
  }
  // Cut inside the string: what may still be its close, or a split character, waits.
  std::string_view raw = text_.substr(pos + q.open.size());
  size_t held = markup::partial_suffix(raw, q.close);
  if (q.escapes != Escapes::none) held = 0;  // the close is one character: nothing is held
  value.resize(value.size() - held);
  value.resize(value.size() - markup::incomplete_utf8_suffix(value));
  markup::append_json_escaped(out_, value);
  return {Status::partial, text_.size()};
}

}  // namespace

size_t word_end(std::string_view text, size_t pos) {
  while (pos < text.size() && is_word_char(text[pos])) ++pos;
  return pos;
}

Result to_json(std::string_view text, size_t pos, const Dialect& dialect, std::string& out) {
  return Converter(text, dialect, out).value(pos, 0);
}

}  // namespace baton::toolcall::loose
