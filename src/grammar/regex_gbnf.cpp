// Regex → GBNF in two steps: regex_parse.cpp builds a small normalized syntax tree (sets of code
// points, concatenation, alternation, bounded repetition; regex_ast.h), and the emitter here
// prints it as one GBNF expression. With length bounds the tree goes to regex_bounded.cpp
// instead.
#include "grammar/regex_gbnf.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "grammar/regex_ast.h"
#include "grammar/utf8_ranges.h"

namespace baton::grammar {
namespace regex {
namespace {

// GBNF text for one character inside a literal or a class: ASCII as is, the rest escaped so the
// grammar text stays readable in logs.
std::string escape_char(uint32_t cp, bool in_class) {
  const std::string_view special = in_class ? "\n\r\t\"\\[]-^" : "\n\r\t\"\\";
  if (const size_t i = special.find(static_cast<char>(cp)); cp < 0x80 && i != special.npos) {
    return std::string{'\\', "nrt\"\\[]-^"[i]};
  }
  if (cp < 0x20 || cp == 0x7F) return fmt::format("\\x{:02x}", cp);
  if (cp < 0x80) return std::string(1, static_cast<char>(cp));
  return cp <= 0xFFFF ? fmt::format("\\u{:04x}", cp) : fmt::format("\\U{:08x}", cp);
}

std::string literal(std::u32string_view s) {
  std::string out = "\"";
  for (char32_t c : s) out += escape_char(c, false);
  return out + "\"";
}

std::string char_class(const Ranges& set) {
  // A negated class is the short spelling of sets like \W or [^"]: use the one with fewer ranges.
  const Ranges comp = complement(set);
  if (comp.empty()) return ".";
  const bool negated = comp.size() < set.size();
  std::string out = negated ? "[^" : "[";
  for (auto [lo, hi] : negated ? comp : set) {
    out += escape_char(lo, true);
    if (hi > lo + 1) out += '-';
    if (hi > lo) out += escape_char(hi, true);
  }
  return out + "]";
}

std::u32string widen(std::string_view ascii) {
  return {ascii.begin(), ascii.end()};
}

class Emitter {
 public:
  explicit Emitter(bool json) : json_(json) {}

  struct Out {
    std::string text;
    bool atomic = true;  // may take a postfix operator as it is
  };

  Out emit(const Node& n) {
    if (n.kind == Kind::Chars) {
      return is_single(n) ? Out{literal(spell(n.chars[0].first))} : set(n.chars);
    }
    if (n.kind == Kind::Concat) return concat(n);
    if (n.kind == Kind::Alt) return alt(n);
    if (n.kind == Kind::Repeat) return repeat(n);
    return {"\"\""};
  }

  static std::string atom(const Out& o) { return o.atomic ? o.text : "(" + o.text + ")"; }

 private:
  static bool is_single(const Node& n) {
    return n.kind == Kind::Chars && n.chars.size() == 1 && n.chars[0].first == n.chars[0].second;
  }

  static Out group(std::vector<Out> alts) {
    if (alts.size() == 1) return alts[0];
    std::string text = "(";
    for (size_t i = 0; i < alts.size(); ++i) text += (i ? " | " : "") + alts[i].text;
    return {text + ")", true};
  }

  // How code point cp is written in the output: itself, or inside a JSON string its one
  // canonical escape (short forms where JSON has them, else \u00XX).
  std::u32string spell(uint32_t cp) const {
    if (!json_ || (cp >= 0x20 && cp != '"' && cp != '\\')) return std::u32string(1, cp);
    constexpr std::string_view kShort = "\"\\\b\f\n\r\t";
    if (const size_t i = kShort.find(static_cast<char>(cp)); i != kShort.npos) {
      return {U'\\', static_cast<char32_t>("\"\\bfnrt"[i])};
    }
    if (cp < 0x20) return widen(fmt::format("\\u{:04x}", cp));
    return std::u32string(1, cp);
  }

  static Out one_of(const std::u32string& cps) {
    if (cps.size() == 1) return {literal(cps)};
    Ranges r;
    for (char32_t c : cps) r.emplace_back(c, c);
    return {char_class(normalize_ranges(r))};
  }

  // Inside a JSON string, ", \ and control characters take an escape: the class keeps its other
  // members, and the escaped ones become alternatives after one backslash.
  Out set(const Ranges& s) {
    if (!json_) return {char_class(s)};
    std::vector<Out> alts;
    const Ranges plain = subtract(s, {{0, 0x1F}, {'"', '"'}, {'\\', '\\'}});
    if (plain.size() == 1 && plain[0].first == plain[0].second) {
      alts.push_back({literal(std::u32string(1, plain[0].first))});
    } else if (!plain.empty()) {
      alts.push_back({char_class(plain)});
    }
    std::u32string shorts, controls[2];
    for (uint32_t cp = 0; cp <= '\\'; ++cp) {
      if ((cp >= 0x20 && cp != '"' && cp != '\\') || !contains(s, cp)) continue;
      const std::u32string sp = spell(cp);
      if (sp.size() == 2) {
        shorts += sp[1];
      } else {
        controls[cp >> 4] += sp[5];
      }
    }
    std::vector<Out> escapes;
    if (!shorts.empty()) escapes.push_back(one_of(shorts));
    for (uint32_t hi = 0; hi < 2; ++hi) {
      if (controls[hi].empty()) continue;
      const std::u32string prefix = widen(fmt::format("u00{}", hi));
      if (controls[hi].size() == 1) {
        escapes.push_back({literal(prefix + controls[hi])});
      } else {
        escapes.push_back({literal(prefix) + " " + one_of(controls[hi]).text, false});
      }
    }
    if (!escapes.empty()) alts.push_back({literal(U"\\") + " " + atom(group(escapes)), false});
    return group(std::move(alts));
  }

  // Runs of single characters print as one literal.
  Out concat(const Node& n) {
    std::vector<Out> parts;
    std::u32string run;
    auto flush = [&] {
      if (!run.empty()) parts.push_back({literal(run)});
      run.clear();
    };
    for (const Node& k : n.kids) {
      if (is_single(k)) {
        run += spell(k.chars[0].first);
        continue;
      }
      flush();
      parts.push_back(emit(k));
    }
    flush();
    if (parts.size() == 1) return parts[0];
    std::string text;
    for (const Out& p : parts) text += (text.empty() ? "" : " ") + p.text;
    return {text, false};
  }

  Out alt(const Node& n) {
    std::vector<Out> alts;
    bool optional = false;
    for (const Node& k : n.kids) {
      if (k.kind == Kind::Empty) {
        optional = true;
      } else {
        alts.push_back(emit(k));
      }
    }
    if (alts.empty()) return {"\"\""};
    Out g = group(std::move(alts));
    if (!optional) return g;
    return {atom(g) + "?", false};
  }

  Out repeat(const Node& n) {
    std::string q;
    if (n.min == 0 && n.max == 1) {
      q = "?";
    } else if (n.max == kInf) {
      q = n.min == 0 ? "*" : n.min == 1 ? "+" : fmt::format("{{{},}}", n.min);
    } else if (n.min == n.max) {
      q = fmt::format("{{{}}}", n.min);
    } else {
      q = fmt::format("{{{},{}}}", n.min, n.max);
    }
    return {atom(emit(n.kids[0])) + q, false};
  }

  bool json_;
};

}  // namespace

std::string to_gbnf(const Node& n, bool json_string_body) {
  return Emitter::atom(Emitter(json_string_body).emit(n));
}

}  // namespace regex

std::string regex_to_gbnf(std::string_view pattern, const RegexOptions& opts) {
  const regex::Node root = regex::parse_pattern(pattern, opts.search);
  if (opts.min_length > 0 || opts.max_length >= 0) {
    return regex::bounded_to_gbnf(root, pattern, opts);
  }
  return regex::to_gbnf(root, opts.json_string_body);
}

}  // namespace baton::grammar
