// Regex → syntax tree: a recursive-descent parser of the JSON Schema / ECMAScript pattern
// subset docs/GRAMMAR.md states, building the normalized tree of regex_ast.h. regex_gbnf.cpp
// prints the tree; regex_bounded.cpp prints it with length bounds.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>
#include <vector>

#include "grammar/regex_ast.h"
#include "grammar/utf8_ranges.h"

namespace baton::grammar::regex {
namespace {

constexpr long kMaxCount = 10000;  // the GBNF parser's own limit
constexpr int kMaxDepth = 100;     // bounds the parser's and the emitter's recursion
constexpr std::string_view kRegular = "(baton constrains output to a regular language)";

bool is_surrogate(uint32_t cp) {
  return cp >= 0xD800 && cp <= 0xDFFF;
}

// \d \w \s and their complements \D \W \S (ASCII, as JavaScript without the u flag).
std::optional<Ranges> shorthand(char c) {
  static const Ranges kSets[] = {{{'0', '9'}},
                                 {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}},
                                 {{'\t', '\r'}, {' ', ' '}}};  // \t \n \v \f \r and space
  const size_t i = std::string_view("dwsDWS").find(c);
  if (i == std::string_view::npos) return std::nullopt;
  return i < 3 ? kSets[i] : complement(kSets[i - 3]);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Parser {
 public:
  struct Branch {  // one top-level alternative, with its anchors
    Node node;
    bool anchored_start = false, anchored_end = false;
  };

  explicit Parser(std::string_view src) : src_(src) {}

  std::vector<Branch> parse() {
    std::vector<Branch> out;
    for (;;) {
      Branch b;
      b.node = parse_concat(0, &b);
      out.push_back(std::move(b));
      if (eof()) return out;
      ++pos_;  // '|': at depth 0 parse_concat stops only there or at the end
    }
  }

 private:
  struct Bounds {
    long min = 0, max = kInf;
    size_t end = 0;
  };
  struct ClassAtom {
    uint32_t cp = 0;
    std::optional<Ranges> set;  // a shorthand such as \d
  };

  bool eof() const { return pos_ >= src_.size(); }
  char peek() const { return eof() ? '\0' : src_[pos_]; }

  [[noreturn]] void fail(size_t at, std::string_view msg) const {
    throw GrammarError(fmt::format("regex: {} (at offset {} of the pattern)", msg, at));
  }

  Node parse_alt(int depth) {
    std::vector<Node> alts{parse_concat(depth, nullptr)};
    while (peek() == '|') {
      ++pos_;
      alts.push_back(parse_concat(depth, nullptr));
    }
    return make_alt(std::move(alts));
  }

  // top is the branch being read when at depth 0: only there may anchors appear.
  Node parse_concat(int depth, Branch* top) {
    std::vector<Node> parts;
    while (!eof() && peek() != '|') {
      const char c = peek();
      if (c == ')') {
        if (depth == 0) fail(pos_, "unbalanced ')' without a matching '('; escape it as \\)");
        break;
      }
      if (c == '^' || c == '$') {
        anchor(top, parts.empty());
        continue;
      }
      if (quantifier_at(pos_)) {
        fail(pos_, fmt::format("quantifier '{}' has nothing to repeat; put it after a character "
                               "or group, or escape it as \\{}",
                               c, c));
      }
      Node atom = parse_atom(depth);
      parts.push_back(parse_quantifiers(std::move(atom)));
    }
    return make_concat(std::move(parts));
  }

  void anchor(Branch* top, bool at_start) {
    const char c = src_[pos_];
    const char after = pos_ + 1 < src_.size() ? src_[pos_ + 1] : '|';
    if (top && c == '^' && at_start) {
      top->anchored_start = true;
    } else if (top && c == '$' && (after == '|' || after == '$')) {
      top->anchored_end = true;
    } else {
      fail(pos_, fmt::format("anchor '{}' is only supported at the start (^) or the end ($) of "
                             "the pattern or of a top-level alternative; remove it or escape it "
                             "as \\{}",
                             c, c));
    }
    ++pos_;
  }

  // `{` starts a quantifier only when a well-formed count follows, as in JavaScript; otherwise
  // it is a literal brace.
  std::optional<Bounds> bounds_at(size_t at) const {
    size_t i = at + 1;
    auto number = [&](long& v) {
      const size_t start = i;
      for (; i < src_.size() && std::isdigit(static_cast<unsigned char>(src_[i])); ++i) {
        v = std::min(v * 10 + (src_[i] - '0'), 1000000000L);
      }
      return i > start;
    };
    long lo = 0, hi = 0;
    const bool has_lo = number(lo);
    if (i < src_.size() && src_[i] == '}') {
      if (!has_lo) return std::nullopt;
      return Bounds{lo, lo, i + 1};
    }
    if (i >= src_.size() || src_[i] != ',') return std::nullopt;
    ++i;
    const bool has_hi = number(hi);
    if (i >= src_.size() || src_[i] != '}' || (!has_lo && !has_hi)) return std::nullopt;
    return Bounds{lo, has_hi ? hi : kInf, i + 1};
  }

  bool quantifier_at(size_t at) const {
    const char c = src_[at];
    return c == '*' || c == '+' || c == '?' || (c == '{' && bounds_at(at));
  }

  Node parse_quantifiers(Node atom) {
    if (eof() || !quantifier_at(pos_)) return atom;
    const size_t at = pos_;
    const size_t op = std::string_view("*+?").find(src_[pos_]);
    const Bounds b = op == std::string_view::npos ? *bounds_at(pos_)
                                                  : Bounds{op == 1, op == 2 ? 1 : kInf, pos_ + 1};
    pos_ = b.end;
    const std::string_view text = src_.substr(at, b.end - at);
    if (b.min > kMaxCount || b.max > kMaxCount) {
      fail(at, fmt::format("repetition count in '{}' is above {}", text, kMaxCount));
    }
    if (b.max != kInf && b.max < b.min) {
      fail(at, fmt::format("repetition '{}' has its maximum below its minimum; swap them", text));
    }
    if (peek() == '?') ++pos_;  // lazy: the same language
    if (!eof() && quantifier_at(pos_)) {
      fail(pos_,
           "a quantifier cannot follow another quantifier; group the repeated part as "
           "(?:...) first");
    }
    return make_repeat(std::move(atom), static_cast<int>(b.min), static_cast<int>(b.max));
  }

  Node parse_atom(int depth) {
    const char c = src_[pos_];
    if (c == '(') return parse_group(depth);
    if (c == '[') return parse_class();
    if (c == '\\') return parse_escape();
    if (c == '.') {
      ++pos_;
      return chars(complement({{'\n', '\n'}}));
    }
    const uint32_t cp = next_code_point();
    return chars({{cp, cp}});
  }

  Node parse_group(int depth) {
    const size_t open = pos_++;
    if (depth + 1 > kMaxDepth) {
      fail(open, fmt::format("groups nested deeper than {}; flatten the pattern", kMaxDepth));
    }
    if (peek() == '?') group_prefix(open);
    Node inner = parse_alt(depth + 1);
    if (peek() != ')') fail(open, "unbalanced '(' is never closed; add ')' or escape it as \\(");
    ++pos_;
    return inner;
  }

  // After "(": the non-capturing and named forms only group. The others depend on text around
  // the match or on flags, which a grammar over the output cannot express.
  void group_prefix(size_t open) {
    static const std::pair<std::string_view, std::string_view> kRefused[] = {
        {"?=", "lookahead (?=...)"},        {"?!", "lookahead (?!...)"},
        {"?<=", "lookbehind (?<=...)"},     {"?<!", "lookbehind (?<!...)"},
        {"?P=", "backreference (?P=name)"}, {"?>", "atomic group (?>...)"}};
    const std::string_view rest = src_.substr(pos_);
    for (const auto& [prefix, what] : kRefused) {
      if (rest.starts_with(prefix)) {
        fail(open,
             fmt::format("{} is not supported {}; rewrite the pattern without it", what, kRegular));
      }
    }
    if (rest.starts_with("?:")) {
      pos_ += 2;
      return;
    }
    if (rest.starts_with("?<") || rest.starts_with("?P<")) {
      size_t i = pos_ + (rest[1] == 'P' ? 3 : 2);
      const size_t name = i;
      while (i < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[i])) ||
                                 src_[i] == '_' || src_[i] == '$')) {
        ++i;
      }
      if (i == name || i >= src_.size() || src_[i] != '>') {
        fail(open, "malformed group name; write (?<name>...) with letters, digits and _");
      }
      pos_ = i + 1;
      return;
    }
    fail(open, fmt::format("inline flags or group syntax '(?{}' are not supported; remove them "
                           "and spell variants out, e.g. [aA] instead of (?i)a",
                           rest.substr(1, 1)));
  }

  Node parse_escape() {
    const size_t at = pos_++;
    if (eof()) fail(at, "the pattern ends with a lone backslash; write \\\\ for a backslash");
    const char c = src_[pos_];
    if (auto set = shorthand(c)) {
      ++pos_;
      return chars(*set);
    }
    if (c == 'b' || c == 'B') {
      fail(at, fmt::format("word boundary \\{} is not supported (a grammar cannot look at the "
                           "neighbouring characters); remove it",
                           c));
    }
    if (c == 'k' || (c >= '1' && c <= '9')) {
      fail(at, fmt::format("backreference \\{} is not supported {}; repeat the group's pattern "
                           "instead",
                           c == 'k' ? std::string_view("k<...>") : src_.substr(pos_, 1), kRegular));
    }
    const uint32_t cp = char_escape(at);
    return chars({{cp, cp}});
  }

  // The escapes that stand for one character, anywhere; pos_ is just after the backslash.
  uint32_t char_escape(size_t at) {
    const char c = src_[pos_++];
    if (const size_t i = std::string_view("ntrfv").find(c); i != std::string_view::npos) {
      return "\n\t\r\f\v"[i];
    }
    if (c == '0' && std::isdigit(static_cast<unsigned char>(peek()))) {
      fail(at, "octal escapes are not supported; write \\xHH");
    }
    if (c == '0') return 0;
    if (c == 'x') return hex_digits(at, 2);
    if (c == 'u') return unicode_escape(at);
    if (c == 'c' && std::isalpha(static_cast<unsigned char>(peek()))) return src_[pos_++] % 32;
    if (c == 'p' || c == 'P') {
      fail(at,
           "unicode property escapes \\p{...} are not supported; list the characters in a "
           "class instead");
    }
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x80) {
      --pos_;
      return next_code_point();
    }
    if (std::ispunct(u) || c == ' ') return u;
    fail(at, fmt::format("unknown escape \\{}; remove the backslash (only punctuation may be "
                         "escaped)",
                         c));
  }

  uint32_t hex_digits(size_t at, int count) {
    uint32_t v = 0;
    for (int k = 0; k < count; ++k) {
      const int d = eof() ? -1 : hex_value(peek());
      if (d < 0) fail(at, fmt::format("expected {} hex digits in this escape", count));
      v = v * 16 + d;
      ++pos_;
    }
    return v;
  }

  uint32_t unicode_escape(size_t at) {
    if (peek() == '{') {
      ++pos_;
      uint32_t v = 0;
      int n = 0;
      for (; !eof() && hex_value(peek()) >= 0 && n < 7; ++n) v = v * 16 + hex_value(src_[pos_++]);
      if (n == 0 || n > 6 || peek() != '}' || v > kMaxCodePoint) {
        fail(at, "\\u{...} needs 1 to 6 hex digits naming a code point up to 10FFFF");
      }
      ++pos_;
      if (is_surrogate(v)) fail(at, "a surrogate code point is not a character");
      return v;
    }
    const uint32_t v = hex_digits(at, 4);
    // JSON and JavaScript spell characters above U+FFFF as a pair of \u escapes.
    if (v >= 0xD800 && v <= 0xDBFF && src_.substr(pos_).starts_with("\\u")) {
      const size_t save = pos_;
      pos_ += 2;
      const uint32_t low = hex_digits(at, 4);
      if (low >= 0xDC00 && low <= 0xDFFF) return 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00);
      pos_ = save;
    }
    if (is_surrogate(v)) {
      fail(at, fmt::format("lone surrogate \\u{:04X} is not a character; write the character "
                           "itself or \\u{{...}}",
                           v));
    }
    return v;
  }

  uint32_t next_code_point() {
    const size_t at = pos_;
    const auto b0 = static_cast<unsigned char>(src_[pos_++]);
    if (b0 < 0x80) return b0;
    const int extra = (b0 & 0xE0) == 0xC0   ? 1
                      : (b0 & 0xF0) == 0xE0 ? 2
                      : (b0 & 0xF8) == 0xF0 ? 3
                                            : 0;
    uint32_t cp = b0 & (0x3F >> extra);
    bool ok = extra > 0;
    for (int k = 0; ok && k < extra; ++k) {
      ok = !eof() && (static_cast<unsigned char>(peek()) & 0xC0) == 0x80;
      if (ok) cp = (cp << 6) | (static_cast<unsigned char>(src_[pos_++]) & 0x3F);
    }
    static constexpr uint32_t kShortest[] = {0x80, 0x80, 0x800, 0x10000};
    if (!ok || cp < kShortest[extra] || cp > kMaxCodePoint || is_surrogate(cp)) {
      fail(at, "the pattern is not valid UTF-8");
    }
    return cp;
  }

  Node parse_class() {
    const size_t open = pos_++;
    const bool negated = peek() == '^';
    if (negated) ++pos_;
    Ranges set;
    for (;;) {
      if (eof()) fail(open, "unterminated class '[' has no ']'; close it or escape it as \\[");
      if (src_[pos_] == ']') break;
      const size_t at = pos_;
      const ClassAtom lo = class_atom(open);
      if (peek() == '-' && pos_ + 1 < src_.size() && src_[pos_ + 1] != ']') {
        ++pos_;
        const ClassAtom hi = class_atom(open);
        const std::string_view text = src_.substr(at, pos_ - at);
        if (lo.set || hi.set) {
          fail(at, fmt::format("class range '{}' has a shorthand as an end; escape the '-' as \\-",
                               text));
        }
        if (hi.cp < lo.cp) {
          fail(at,
               fmt::format("class range '{}' is out of order; put the smaller end first", text));
        }
        set.emplace_back(lo.cp, hi.cp);
      } else if (lo.set) {
        set.insert(set.end(), lo.set->begin(), lo.set->end());
      } else {
        set.emplace_back(lo.cp, lo.cp);
      }
    }
    ++pos_;
    Node n = chars(negated ? complement(set) : set);
    if (n.chars.empty()) fail(open, "this class matches no character; remove it or widen it");
    return n;
  }

  ClassAtom class_atom(size_t open) {
    if (src_[pos_] != '\\') return {next_code_point(), std::nullopt};
    const size_t at = pos_++;
    if (eof()) fail(open, "unterminated class '[' has no ']'; close it or escape it as \\[");
    const char c = src_[pos_];
    if (auto set = shorthand(c)) {
      ++pos_;
      return {0, std::move(set)};
    }
    if (c == 'b') {  // backspace, inside a class
      ++pos_;
      return {'\b', std::nullopt};
    }
    if (c == 'B' || (c >= '1' && c <= '9')) {
      fail(at, fmt::format("\\{} is not supported inside a class; remove it", c));
    }
    return {char_escape(at), std::nullopt};
  }

  std::string_view src_;
  size_t pos_ = 0;
};

}  // namespace

Node parse_pattern(std::string_view pattern, bool search) {
  std::vector<Parser::Branch> branches = Parser(pattern).parse();
  std::vector<Node> alts;
  if (!search) {
    for (auto& b : branches) alts.push_back(std::move(b.node));
    return make_alt(std::move(alts));
  }
  // A JSON Schema pattern is a search: an unanchored end may have any text beyond the match.
  const Node any = make_repeat(chars({{0, kMaxCodePoint}}), 0, kInf);
  auto wrap = [&](Node core, bool start, bool end) {
    return make_concat({start ? Node{} : any, std::move(core), end ? Node{} : any});
  };
  const bool uniform = std::all_of(branches.begin(), branches.end(), [&](const auto& b) {
    return b.anchored_start == branches[0].anchored_start &&
           b.anchored_end == branches[0].anchored_end;
  });
  if (uniform) {
    std::vector<Node> cores;
    for (auto& b : branches) cores.push_back(std::move(b.node));
    return wrap(make_alt(std::move(cores)), branches[0].anchored_start, branches[0].anchored_end);
  }
  for (auto& b : branches)
    alts.push_back(wrap(std::move(b.node), b.anchored_start, b.anchored_end));
  return make_alt(std::move(alts));
}

}  // namespace baton::grammar::regex
