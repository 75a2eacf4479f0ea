// The regex syntax tree's constructors (regex_ast.h): every tree they build is normalized as it
// is built, so nothing that may match empty text is repeated without bound (the grammar checker
// refuses that as left recursion), and the code point sets they share with the parser and the
// printer.
#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "grammar/regex_ast.h"
#include "grammar/utf8_ranges.h"

namespace baton::grammar::regex {

// Surrogates are not characters: keeping them out of every set makes "all characters" one
// canonical set, so complements and emptiness tests mean what they say.
Ranges complement(Ranges r) {
  r.emplace_back(0xD800, 0xDFFF);
  return complement_ranges(r);
}

Ranges subtract(const Ranges& a, Ranges b) {
  const Ranges not_a = complement(a);
  b.insert(b.end(), not_a.begin(), not_a.end());
  return complement(b);
}

bool contains(const Ranges& r, uint32_t cp) {
  return std::any_of(r.begin(), r.end(),
                     [cp](const auto& x) { return x.first <= cp && cp <= x.second; });
}

namespace {

Ranges without_surrogates(const Ranges& r) {
  return complement(complement_ranges(r));
}

Node node(Kind kind, std::vector<Node> kids = {}, int min = 0, int max = 0) {
  Node n;
  n.kind = kind;
  n.kids = std::move(kids);
  n.min = min;
  n.max = max;
  return n;
}

}  // namespace

Node chars(const Ranges& r) {
  Node n = node(Kind::Chars);
  n.chars = without_surrogates(r);
  return n;
}

bool nullable(const Node& n) {
  if (n.kind == Kind::Chars) return false;
  if (n.kind == Kind::Repeat) return n.min == 0 || nullable(n.kids[0]);
  if (n.kind == Kind::Alt) return std::any_of(n.kids.begin(), n.kids.end(), nullable);
  return std::all_of(n.kids.begin(), n.kids.end(), nullable);  // Empty has no kids
}

Node make_concat(std::vector<Node> parts) {
  Node out = node(Kind::Concat);
  for (Node& p : parts) {
    if (p.kind == Kind::Concat) {
      for (Node& k : p.kids) out.kids.push_back(std::move(k));
    } else if (p.kind != Kind::Empty) {
      out.kids.push_back(std::move(p));
    }
  }
  if (out.kids.empty()) return Node{};
  if (out.kids.size() == 1) return std::move(out.kids[0]);
  return out;
}

// Alternatives that are single sets merge into one set, so `a|b|c` prints as [abc].
Node make_alt(std::vector<Node> alts) {
  Node out = node(Kind::Alt);
  std::optional<size_t> set_at;
  bool has_empty = false;
  auto add = [&](Node&& a) {
    if (a.kind == Kind::Chars && set_at) {
      Ranges& into = out.kids[*set_at].chars;
      into.insert(into.end(), a.chars.begin(), a.chars.end());
      into = normalize_ranges(std::move(into));
      return;
    }
    if (a.kind == Kind::Empty && std::exchange(has_empty, true)) return;
    if (a.kind == Kind::Chars) set_at = out.kids.size();
    out.kids.push_back(std::move(a));
  };
  for (Node& a : alts) {
    if (a.kind != Kind::Alt) {
      add(std::move(a));
      continue;
    }
    for (Node& k : a.kids) add(std::move(k));
  }
  if (out.kids.empty()) return Node{};
  if (out.kids.size() == 1) return std::move(out.kids[0]);
  return out;
}

namespace {

// The language of n without the empty string; nullopt when nothing else is left. For a
// concatenation whose parts may all be empty, a non-empty match starts with the first part that
// matches something: A'·B·C | B'·C | C'.
std::optional<Node> non_empty(const Node& n) {
  if (!nullable(n)) return n;
  if (n.kind == Kind::Repeat) {
    auto x = non_empty(n.kids[0]);
    if (!x) return std::nullopt;
    return make_repeat(std::move(*x), 1, n.max);
  }
  std::vector<Node> alts;  // one per kid of an Alt; for a Concat, one per possible first part
  for (size_t i = 0; i < n.kids.size(); ++i) {
    auto first = non_empty(n.kids[i]);
    if (!first) continue;
    std::vector<Node> seq{std::move(*first)};
    if (n.kind == Kind::Concat) seq.insert(seq.end(), n.kids.begin() + i + 1, n.kids.end());
    alts.push_back(make_concat(std::move(seq)));
  }
  if (alts.empty()) return std::nullopt;
  return make_alt(std::move(alts));
}

}  // namespace

// X{min,max} where X may match empty is X'{0,max} with X' = X minus the empty string: empty
// iterations add nothing. That keeps `(a*)*` from being a left-recursive repetition.
Node make_repeat(Node x, int min, int max) {
  if (max == 0 || x.kind == Kind::Empty) return Node{};
  if (nullable(x)) {
    auto ne = non_empty(x);
    if (!ne) return Node{};
    x = std::move(*ne);
    min = 0;
  }
  // (Y+){n,m} is Y{n,}: any count of at least n splits into n to m non-empty runs.
  if (x.kind == Kind::Repeat && x.min == 1 && x.max == kInf) {
    Node y = std::move(x.kids[0]);
    return make_repeat(std::move(y), min, kInf);
  }
  if (min == 1 && max == 1) return x;
  std::vector<Node> kids;
  kids.push_back(std::move(x));
  return node(Kind::Repeat, std::move(kids), min, max);
}

}  // namespace baton::grammar::regex
