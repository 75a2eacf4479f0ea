// GBNF text → Grammar (the syntax is stated in docs/GRAMMAR.md). Written here rather than taken
// from a library: the engines that parse GBNF (llama.cpp, xgrammar, llguidance) are not packaged
// for Debian 12, and this parser is small and lowers straight into the matcher's byte classes.
#include <fmt/format.h>

#include <cctype>

#include "grammar/grammar_builder.h"
#include "grammar/utf8_ranges.h"
#include "util/utf8.h"

namespace baton::grammar {
namespace {

constexpr int kMaxRepeat = 10000;

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
}

class Parser {
 public:
  Parser(std::string_view src, Grammar::Builder& b) : src_(src), b_(b) {}

  void parse_all() {
    skip_space();
    while (pos_ < src_.size()) {
      parse_rule();
      skip_space();
    }
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < src_.size(); ++i) {
      if (src_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw GrammarError(fmt::format("grammar line {} column {}: {}", line, col, msg));
  }

  bool eof() const { return pos_ >= src_.size(); }
  char peek() const { return eof() ? '\0' : src_[pos_]; }

  void skip_space() {
    while (!eof()) {
      const char c = src_[pos_];
      if (c == '#') {
        while (!eof() && src_[pos_] != '\n') ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else {
        break;
      }
    }
  }

  std::string parse_name() {
    const size_t start = pos_;
    while (!eof() && is_name_char(src_[pos_])) ++pos_;
    if (pos_ == start) fail(fmt::format("expected a rule name, found '{}'", peek()));
    return std::string(src_.substr(start, pos_ - start));
  }

  // A rule name followed by ::= starts the next rule: the end of the current rule's body.
  bool at_rule_start() const {
    size_t p = pos_;
    while (p < src_.size() && is_name_char(src_[p])) ++p;
    if (p == pos_) return false;
    while (p < src_.size() && (src_[p] == ' ' || src_[p] == '\t')) ++p;
    return src_.substr(p, 3) == "::=";
  }

  void parse_rule() {
    const std::string name = parse_name();
    skip_space();
    if (src_.substr(pos_, 3) != "::=")
      fail(fmt::format("expected '::=' after rule name '{}'", name));
    pos_ += 3;
    const uint32_t id = b_.rule_id(name);
    if (b_.defined[id]) fail(fmt::format("rule '{}' is defined twice", name));
    b_.defined[id] = true;
    b_.define(id, parse_alternatives(name, false));
  }

  Alternatives parse_alternatives(const std::string& hint, bool nested) {
    Alternatives alts;
    alts.push_back(parse_sequence(hint, nested));
    while (peek() == '|') {
      ++pos_;
      alts.push_back(parse_sequence(hint, nested));
    }
    return alts;
  }

  Sequence parse_sequence(const std::string& hint, bool nested) {
    Sequence out;
    for (;;) {
      skip_space();
      if (eof() || peek() == '|') break;
      if (peek() == ')') {
        if (!nested) fail("')' without a matching '('");
        break;
      }
      if (!nested && at_rule_start()) break;
      Sequence item = parse_primary(hint);
      skip_space();
      apply_postfix(item, out, hint);
    }
    return out;
  }

  void apply_postfix(Sequence& item, Sequence& out, const std::string& hint) {
    const char c = peek();
    int min = 1, max = 1;
    if (c == '*') {
      min = 0, max = -1;
    } else if (c == '+') {
      min = 1, max = -1;
    } else if (c == '?') {
      min = 0, max = 1;
    } else if (c == '{') {
      parse_bounds(min, max);
      b_.repeat(item, min, max, out, hint);
      return;
    } else {
      out.insert(out.end(), item.begin(), item.end());
      return;
    }
    ++pos_;
    b_.repeat(item, min, max, out, hint);
  }

  int parse_count() {
    const size_t start = pos_;
    long v = 0;
    while (!eof() && std::isdigit(static_cast<unsigned char>(peek()))) {
      v = v * 10 + (src_[pos_++] - '0');
      if (v > kMaxRepeat) fail(fmt::format("repetition count above {}", kMaxRepeat));
    }
    return pos_ == start ? -1 : static_cast<int>(v);
  }

  void parse_bounds(int& min, int& max) {
    ++pos_;  // {
    skip_space();
    const int lo = parse_count();
    skip_space();
    if (peek() == '}') {
      if (lo < 0) fail("empty repetition {}; write {n}, {n,}, {n,m} or {,m}");
      ++pos_;
      min = max = lo;
      return;
    }
    if (peek() != ',') fail("expected ',' or '}' in a repetition");
    ++pos_;
    skip_space();
    const int hi = parse_count();
    skip_space();
    if (peek() != '}') fail("expected '}' to close the repetition");
    ++pos_;
    min = lo < 0 ? 0 : lo;
    max = hi;
    if (max >= 0 && max < min)
      fail(fmt::format("repetition {{{},{}}} has max below min", min, max));
  }

  Sequence parse_primary(const std::string& hint) {
    const char c = peek();
    if (c == '"') return parse_literal();
    if (c == '[') return {parse_class()};
    if (c == '.') {
      ++pos_;
      return {b_.code_points({{0, 0x10FFFF}})};
    }
    if (c == '(') {
      // Groups are parsed by recursion, so their depth is what bounds the parser's stack.
      if (depth_ >= GrammarLimits::kMaxNesting) {
        fail(fmt::format("groups nested deeper than {}; move inner groups into rules of their own",
                         GrammarLimits::kMaxNesting));
      }
      ++pos_;
      ++depth_;
      Alternatives alts = parse_alternatives(hint, true);
      --depth_;
      if (peek() != ')') fail("expected ')'");
      ++pos_;
      if (alts.size() == 1) return alts[0];
      return {b_.group(std::move(alts), hint)};
    }
    if (is_name_char(c)) return {Element{Element::Kind::Rule, b_.rule_id(parse_name())}};
    fail(fmt::format("unexpected '{}'; expected a literal, [class], (group), . or a rule name", c));
  }

  uint32_t parse_hex(int digits) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      const char h = peek();
      int d = h >= '0' && h <= '9'   ? h - '0'
              : h >= 'a' && h <= 'f' ? h - 'a' + 10
              : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                     : -1;
      if (d < 0) fail(fmt::format("expected {} hex digits", digits));
      v = v * 16 + d;
      ++pos_;
    }
    if (v > 0x10FFFF) fail("code point above U+10FFFF");
    return v;
  }

  // One character of a literal or class: an escape or one UTF-8 encoded code point.
  uint32_t parse_char() {
    if (eof()) fail("unterminated literal or class");
    const unsigned char c = src_[pos_];
    if (c == '\\') {
      ++pos_;
      const char e = peek();
      ++pos_;
      switch (e) {
        case 'n':
          return '\n';
        case 'r':
          return '\r';
        case 't':
          return '\t';
        case 'x':
          return parse_hex(2);
        case 'u':
          return parse_hex(4);
        case 'U':
          return parse_hex(8);
        case '\\':
        case '"':
        case '\'':
        case '[':
        case ']':
        case '-':
        case '^':
        case '/':
          return static_cast<uint32_t>(e);
        default:
          --pos_;
          fail(fmt::format("unknown escape '\\{}'", e));
      }
    }
    const int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || pos_ + n > src_.size()) fail("invalid UTF-8 in the grammar text");
    uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (int i = 1; i < n; ++i)
      cp = (cp << 6) | (static_cast<unsigned char>(src_[pos_ + i]) & 0x3F);
    pos_ += n;
    return cp;
  }

  Sequence parse_literal() {
    ++pos_;  // "
    std::string bytes;
    while (peek() != '"') {
      if (eof() || peek() == '\n') fail("unterminated string literal");
      util::append_utf8(bytes, parse_char());
    }
    ++pos_;
    Sequence out;
    for (unsigned char ch : bytes) out.push_back(b_.byte(ch));
    return out;
  }

  Element parse_class() {
    ++pos_;  // [
    bool negate = false;
    if (peek() == '^') {
      negate = true;
      ++pos_;
    }
    std::vector<std::pair<uint32_t, uint32_t>> ranges;
    while (peek() != ']') {
      if (eof() || peek() == '\n') fail("unterminated character class");
      const uint32_t lo = parse_char();
      uint32_t hi = lo;
      if (peek() == '-' && pos_ + 1 < src_.size() && src_[pos_ + 1] != ']') {
        ++pos_;
        hi = parse_char();
        if (hi < lo) fail("character range with its end before its start");
      }
      ranges.emplace_back(lo, hi);
    }
    ++pos_;
    if (negate) ranges = complement_ranges(ranges);
    try {
      return b_.code_points(ranges);
    } catch (const GrammarError& e) {
      fail(e.what());
    }
  }

  std::string_view src_;
  size_t pos_ = 0;
  size_t depth_ = 0;  // ( ) groups open at pos_
  Grammar::Builder& b_;
};

}  // namespace

std::shared_ptr<const Grammar> Grammar::parse(std::string_view gbnf, std::string_view root) {
  Builder b;
  Parser(gbnf, b).parse_all();
  return b.finish(std::string(root));
}

}  // namespace baton::grammar
