// A pattern with length bounds (JSON Schema `pattern` with `minLength` / `maxLength`): the
// product of the pattern's automaton with a character counter, printed as GBNF rules.
//
// The automaton is deterministic and built from Brzozowski derivatives: a state is itself a
// pattern tree (what is left to match), and reading character c leads to the tree of the
// suffixes after c. Alternatives are kept in a canonical order without duplicates, so the states
// are finitely many. Characters that lead to the same state form one set, so the rules are
// unambiguous: the sets leaving a state are disjoint.
//
// A product state is (tree D, characters so far n). When every string of D ends within the
// bounds, D is printed as it is, as one expression; likewise a repetition of a fixed-width item
// whose count can be clamped to the bounds (D = x{a,b} → x{a',b'}). Otherwise D gets a rule for
// this n: one alternative per outgoing set, followed by the product state for n + 1, and an
// empty one when D may end here. Counts only grow, so no rule refers back to itself (the caller's
// add_rule cannot name a rule before its body is known); with no upper bound, every state
// becomes one expression by n = min_length at the latest. The rules are made from the longest
// prefix down, so that each rule's targets are named before it.
//
// The size is about (states of the automaton) × (max_length or min_length); past kMaxRules
// rules, or an automaton too large to build (patterns like (a|b)*a(a|b){30}), it is refused.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "grammar/regex_ast.h"

namespace baton::grammar::regex {
namespace {

constexpr size_t kMaxRules = 20000;                // also bounds the product states
constexpr size_t kMaxStateText = size_t{1} << 21;  // bytes of all states' keys together
constexpr int64_t kMaxCount = 10000;               // the GBNF repetition limit
constexpr int64_t kMaxClampCount = 32;             // see clamp_repeat
constexpr size_t kMaxInline = 400;  // characters of a state's text written in place (rule_for)
constexpr size_t kMaxShort = 24;    // characters of a text repeated rather than shared (shared)
constexpr int64_t kHuge = int64_t{1} << 50;  // a length at or above it counts as unbounded

struct Lengths {
  int64_t min = 0, max = 0;  // max kHuge: unbounded
};

int64_t add_sat(int64_t a, int64_t b) {
  return std::min(a + b, kHuge);
}

int64_t mul_sat(int64_t a, int64_t k) {
  if (a == 0 || k == 0) return 0;
  return a >= kHuge / k ? kHuge : a * k;
}

Lengths lengths(const Node& n) {
  switch (n.kind) {
    case Kind::Empty:
      return {0, 0};
    case Kind::Chars:
      return {1, 1};
    case Kind::Repeat: {
      const Lengths x = lengths(n.kids[0]);
      return {mul_sat(x.min, n.min), n.max == kInf ? kHuge : mul_sat(x.max, n.max)};
    }
    case Kind::Concat: {
      Lengths out{0, 0};
      for (const Node& k : n.kids) {
        const Lengths x = lengths(k);
        out = {add_sat(out.min, x.min), add_sat(out.max, x.max)};
      }
      return out;
    }
    case Kind::Alt:
      break;
  }
  Lengths out{kHuge, 0};
  for (const Node& k : n.kids) {
    const Lengths x = lengths(k);
    out = {std::min(out.min, x.min), std::max(out.max, x.max)};
  }
  return out;
}

// A text that identifies the tree: equal keys, equal trees.
void append_key(const Node& n, std::string& out) {
  switch (n.kind) {
    case Kind::Empty:
      out += 'e';
      return;
    case Kind::Chars:
      out += '[';
      for (auto [lo, hi] : n.chars) out += fmt::format("{:x}-{:x},", lo, hi);
      out += ']';
      return;
    case Kind::Repeat:
      out += fmt::format("{{{},{}:", n.min, n.max);
      append_key(n.kids[0], out);
      out += '}';
      return;
    case Kind::Concat:
    case Kind::Alt:
      out += n.kind == Kind::Concat ? '(' : '<';
      for (const Node& k : n.kids) {
        append_key(k, out);
        out += ';';
      }
      out += n.kind == Kind::Concat ? ')' : '>';
      return;
  }
}

std::string key_of(const Node& n) {
  std::string out;
  append_key(n, out);
  return out;
}

// Any text at all: it absorbs every other alternative.
bool is_anything(const Node& n) {
  static const Ranges kAll = chars({{0, kMaxCodePoint}}).chars;
  return n.kind == Kind::Repeat && n.min == 0 && n.max == kInf && n.kids[0].kind == Kind::Chars &&
         n.kids[0].chars == kAll;
}

// The alternation of parts in canonical form: nested alternations flattened, the sets merged
// into one, duplicates dropped, the rest sorted by key. parts is not empty.
Node union_of(std::vector<Node> parts) {
  std::vector<Node> flat;
  for (Node& p : parts) {
    if (p.kind != Kind::Alt) {
      flat.push_back(std::move(p));
      continue;
    }
    for (Node& k : p.kids) flat.push_back(std::move(k));
  }
  Ranges set;
  std::map<std::string, Node> by_key;
  for (Node& p : flat) {
    if (is_anything(p)) return std::move(p);
    if (p.kind == Kind::Chars) {
      set.insert(set.end(), p.chars.begin(), p.chars.end());
    } else {
      std::string key = key_of(p);
      by_key.emplace(std::move(key), std::move(p));
    }
  }
  if (!set.empty()) {
    Node merged = chars(set);
    by_key.emplace(key_of(merged), std::move(merged));
  }
  if (by_key.size() == 1) return std::move(by_key.begin()->second);
  Node out;
  out.kind = Kind::Alt;
  for (auto& [key, node] : by_key) out.kids.push_back(std::move(node));
  return out;
}

// What is left of n after the character cp; nullopt when n has no string that starts with cp.
std::optional<Node> derive(const Node& n, uint32_t cp) {
  std::vector<Node> parts;
  switch (n.kind) {
    case Kind::Empty:
      return std::nullopt;
    case Kind::Chars:
      if (contains(n.chars, cp)) return Node{};
      return std::nullopt;
    case Kind::Repeat: {
      auto first = derive(n.kids[0], cp);
      if (!first) return std::nullopt;
      Node rest = make_repeat(n.kids[0], std::max(n.min - 1, 0), n.max == kInf ? kInf : n.max - 1);
      return make_concat({std::move(*first), std::move(rest)});
    }
    case Kind::Concat:
      for (size_t i = 0; i < n.kids.size(); ++i) {
        if (auto first = derive(n.kids[i], cp)) {
          std::vector<Node> seq{std::move(*first)};
          seq.insert(seq.end(), n.kids.begin() + i + 1, n.kids.end());
          parts.push_back(make_concat(std::move(seq)));
        }
        if (!nullable(n.kids[i])) break;
      }
      break;
    case Kind::Alt:
      for (const Node& k : n.kids) {
        if (auto d = derive(k, cp)) parts.push_back(std::move(*d));
      }
      break;
  }
  if (parts.empty()) return std::nullopt;
  return union_of(std::move(parts));
}

// The sets a string of n may start with.
void first_sets(const Node& n, std::vector<const Ranges*>& out) {
  if (n.kind == Kind::Chars) out.push_back(&n.chars);
  if (n.kind == Kind::Alt || n.kind == Kind::Repeat) {
    for (const Node& k : n.kids) first_sets(k, out);
  }
  if (n.kind != Kind::Concat) return;
  for (const Node& k : n.kids) {
    first_sets(k, out);
    if (!nullable(k)) break;
  }
}

std::string describe(int64_t min, int64_t max) {
  const int64_t last = max < 0 || min == max ? min : max;
  const std::string_view unit = last == 1 ? "character" : "characters";
  if (max < 0) return fmt::format("at least {} {}", min, unit);
  if (min == 0) return fmt::format("at most {} {}", max, unit);
  if (min == max) return fmt::format("exactly {} {}", min, unit);
  return fmt::format("{} to {} {}", min, max, unit);
}

class BoundedCompiler {
 public:
  BoundedCompiler(std::string_view pattern, const RegexOptions& opts)
      : pattern_(pattern),
        opts_(opts),
        min_(std::max<int64_t>(opts.min_length, 0)),
        max_(opts.max_length) {}

  std::string compile(const Node& root) {
    const int start = intern(root);
    Node leaf;
    const Fit f = fit(start, 0, &leaf);
    if (f == Fit::Dead) refuse_empty();
    std::optional<std::string> out;
    if (f == Fit::Leaf) {
      out = expression(leaf);
    } else {
      expand_levels(start);
      out = build_rules();
      // A rule name is one word; a state written in place is a sequence, grouped here.
      if (out && out->find(' ') != std::string::npos) out = "(" + *out + ")";
    }
    if (!out) refuse_empty();
    return out->empty() ? "\"\"" : *out;
  }

 private:
  struct Transition {
    Ranges set;
    int target = 0;
  };
  struct State {
    Node node;
    bool nullable = false;
    Lengths len;
    bool expanded = false;
    std::vector<Transition> out;
  };
  enum class Fit { Dead, Leaf, Expand };

  int intern(Node n) {
    std::string key = key_of(n);
    if (auto it = ids_.find(key); it != ids_.end()) return it->second;
    key_bytes_ += key.size();
    if (states_.size() >= 4 * kMaxRules || key_bytes_ > kMaxStateText) refuse_too_big();
    State s;
    s.nullable = nullable(n);
    s.len = lengths(n);
    s.node = std::move(n);
    states_.push_back(std::move(s));
    const int id = static_cast<int>(states_.size() - 1);
    ids_.emplace(std::move(key), id);
    return id;
  }

  // Where state d stands after n characters; leaf receives the expression form of a Leaf.
  Fit fit(int d, int64_t n, Node* leaf) const {
    const State& s = states_[d];
    const int64_t lo = add_sat(n, s.len.min), hi = add_sat(n, s.len.max);
    if (max_ >= 0 && lo > max_) return Fit::Dead;
    if (lo >= min_ && (max_ < 0 || hi <= max_)) {
      *leaf = s.node;
      return Fit::Leaf;
    }
    return clamp_repeat(s.node, n, leaf);
  }

  // x{a,b} with every x of the same width w: the counts k with min <= n + k*w <= max. Past the
  // start only for small counts: a clamped count differs from one n to the next, and GBNF spends
  // an element per count, so large ones at many n would cost the square of the length.
  Fit clamp_repeat(const Node& d, int64_t n, Node* leaf) const {
    if (d.kind != Kind::Repeat) return Fit::Expand;
    const Lengths x = lengths(d.kids[0]);
    const int64_t w = x.min;
    if (w != x.max || w == 0 || w >= kHuge) return Fit::Expand;
    const int64_t k_min = std::max<int64_t>(d.min, (std::max<int64_t>(min_ - n, 0) + w - 1) / w);
    int64_t k_max = d.max == kInf ? kHuge : d.max;
    if (max_ >= 0) k_max = std::min(k_max, (max_ - n) / w);
    if (k_max < k_min) return Fit::Dead;
    const int64_t cost = k_max == kHuge ? k_min : k_max;
    if (cost > (n == 0 ? kMaxCount : kMaxClampCount)) return Fit::Expand;
    *leaf = make_repeat(d.kids[0], static_cast<int>(k_min),
                        k_max == kHuge ? kInf : static_cast<int>(k_max));
    return Fit::Leaf;
  }

  // The outgoing sets of state d, one per target. Characters that fall in the same first sets
  // lead to the same state, so one derivative per such group is enough.
  const std::vector<Transition>& transitions(int d) {
    if (states_[d].expanded) return states_[d].out;
    const Node node = states_[d].node;  // intern() below may move the states
    std::vector<const Ranges*> sets;
    first_sets(node, sets);
    std::vector<uint32_t> cuts;
    for (const Ranges* r : sets) {
      for (auto [lo, hi] : *r) {
        cuts.push_back(lo);
        cuts.push_back(hi + 1);
      }
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    std::map<std::vector<bool>, int> by_signature;  // -1: no derivative
    std::map<int, Ranges> by_target;
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
      std::vector<bool> sig;
      for (const Ranges* r : sets) sig.push_back(contains(*r, cuts[i]));
      if (std::none_of(sig.begin(), sig.end(), [](bool b) { return b; })) continue;
      auto [it, added] = by_signature.try_emplace(sig, -1);
      if (added) {
        std::optional<Node> next = derive(node, cuts[i]);
        if (next) it->second = intern(std::move(*next));
      }
      if (it->second >= 0) by_target[it->second].emplace_back(cuts[i], cuts[i + 1] - 1);
    }
    std::vector<Transition> out;
    for (auto& [target, set] : by_target) out.push_back({std::move(set), target});
    states_[d].out = std::move(out);
    states_[d].expanded = true;
    return states_[d].out;
  }

  // levels_[n]: the states that need a rule after n characters, reachable from start.
  void expand_levels(int start) {
    levels_.push_back({start});
    size_t total = 1;
    for (size_t n = 0; n < levels_.size(); ++n) {
      std::set<int> next;
      const std::vector<int> here = levels_[n];
      Node leaf;
      for (int d : here) {
        for (const Transition& t : transitions(d)) {
          if (fit(t.target, static_cast<int64_t>(n) + 1, &leaf) == Fit::Expand) {
            next.insert(t.target);
          }
        }
      }
      total += next.size();
      if (total > kMaxRules) refuse_too_big();
      if (!next.empty()) levels_.emplace_back(next.begin(), next.end());
    }
    refs_.resize(levels_.size() + 1);
  }

  // How product state (d, n) is written: a rule name, an expression, "" for the empty string,
  // or nullopt when no string within the bounds follows. Rules of level n must exist already.
  std::optional<std::string> target_ref(int d, int64_t n) {
    Node leaf;
    const Fit f = fit(d, n, &leaf);
    if (f == Fit::Dead) return std::nullopt;
    if (f == Fit::Leaf) return shared("pattern-rest", expression(leaf));
    return refs_[n].at(d);
  }

  std::string expression(const Node& leaf) const {
    return leaf.kind == Kind::Empty ? "" : to_gbnf(leaf, opts_.json_string_body);
  }

  // The rules, from the longest prefix down so that every rule's targets are known; the start's
  // reference.
  std::optional<std::string> build_rules() {
    for (size_t n = levels_.size(); n-- > 0;) {
      for (int d : levels_[n]) refs_[n][d] = rule_for(d, static_cast<int64_t>(n));
    }
    return refs_[0].at(levels_[0][0]);
  }

  // A state with one way on and no way to end here is written in place (a sequence, which any
  // sequence may hold) while it stays short, rather than as a rule of its own.
  std::optional<std::string> rule_for(int d, int64_t n) {
    std::string body;
    int n_alts = 0;
    for (const Transition& t : transitions(d)) {
      const std::optional<std::string> rest = target_ref(t.target, n + 1);
      if (!rest) continue;
      if (n_alts++) body += " | ";
      body += shared("pattern-char", to_gbnf(chars(t.set), opts_.json_string_body));
      if (!rest->empty()) body += " " + *rest;
    }
    const bool may_end = states_[d].nullable && n >= min_;
    if (n_alts == 0) return may_end ? std::optional<std::string>("") : std::nullopt;
    if (may_end) {
      body += " | \"\"";
    } else if (n_alts == 1 && body.size() <= kMaxInline) {
      return body;
    }
    return add_rule(fmt::format("pattern-{}-{}", d, n), body);
  }

  // A text that many rules would repeat (a leaf, a set spelled with JSON escapes) becomes one
  // rule: the grammar builder expands every copy of a group or a count on its own.
  std::string shared(const std::string& hint, std::string text) {
    if (text.size() <= kMaxShort) return text;
    auto [it, added] = shared_.try_emplace(std::move(text));
    if (added) it->second = add_rule(fmt::format("{}-{}", hint, shared_.size()), it->first);
    return it->second;
  }

  std::string add_rule(const std::string& hint, const std::string& body) {
    if (++n_rules_ > kMaxRules) refuse_too_big();
    return opts_.add_rule(hint, body);
  }

  [[noreturn]] void refuse_empty() const {
    throw GrammarError(
        fmt::format("regex: no string of {} matches the pattern '{}'; widen the length bounds "
                    "(minLength / maxLength) or change the pattern",
                    describe(min_, max_), pattern_));
  }

  [[noreturn]] void refuse_too_big() const {
    throw GrammarError(fmt::format(
        "regex: the pattern '{}' limited to {} is too large to compile: it needs more than {} "
        "grammar rules (about one per position in the pattern and length); lower the length "
        "bounds (maxLength), or drop them and put the length into the pattern (e.g. "
        "^[a-z]{{1,20}}$)",
        pattern_, describe(min_, max_), kMaxRules));
  }

  std::string_view pattern_;
  const RegexOptions& opts_;
  int64_t min_, max_;
  std::vector<State> states_;
  std::unordered_map<std::string, int> ids_;
  std::vector<std::vector<int>> levels_;
  std::map<std::string, std::string> shared_;  // text → its rule
  size_t n_rules_ = 0;
  size_t key_bytes_ = 0;  // the size of the states' keys, a bound on the work
  std::vector<std::map<int, std::optional<std::string>>> refs_;
};

}  // namespace

std::string bounded_to_gbnf(const Node& root, std::string_view pattern, const RegexOptions& opts) {
  if (!opts.add_rule) {
    throw std::invalid_argument("regex_to_gbnf: a length bound needs RegexOptions::add_rule");
  }
  return BoundedCompiler(pattern, opts).compile(root);
}

}  // namespace baton::grammar::regex
