// The checks a grammar must pass before a Matcher may run it: every rule defined, no left
// recursion (the matcher expands rules without consuming input, so a left-recursive rule would
// expand forever), and a start rule that derives at least one finite text.
#include <fmt/format.h>

#include "grammar/grammar_builder.h"

namespace baton::grammar {

// The least set of rules such that a rule is in it when one of its alternatives has every
// element in it, a byte class counting as in it when `bytes_hold`. Nullable rules
// (bytes_hold false) and productive ones (true) are this set. A worklist over the rule uses,
// so it costs the grammar's size once, whatever order the rules come in.
std::vector<bool> Grammar::Builder::derivable(bool bytes_hold) const {
  constexpr uint32_t kNever = 0xFFFFFFFFu;
  const size_t n_alts = alt_starts.size();
  std::vector<uint32_t> use_start(n_rules() + 1, 0);
  for (const Element& e : elements) {
    if (e.kind == Element::Kind::Rule) ++use_start[e.index + 1];
  }
  for (size_t r = 0; r < n_rules(); ++r) use_start[r + 1] += use_start[r];
  std::vector<uint32_t> users(use_start.back());  // alternatives using each rule, by rule
  std::vector<uint32_t> fill(use_start.begin(), use_start.end() - 1);
  std::vector<uint32_t> pending(n_alts), owner(n_alts);  // per alternative
  std::vector<bool> holds(n_rules(), false);
  std::vector<uint32_t> work;
  for (uint32_t r = 0; r < n_rules(); ++r) {
    for (uint32_t a = rule_alts[r].first; a < rule_alts[r].second; ++a) {
      uint32_t n = 0;
      bool never = false;
      for (const Element& e : body(a)) {
        if (e.kind == Element::Kind::Rule) {
          users[fill[e.index]++] = a;
          ++n;
        } else if (!bytes_hold) {
          never = true;
        }
      }
      pending[a] = never ? kNever : n;
      owner[a] = r;
      if (n == 0 && !never && !holds[r]) {
        holds[r] = true;
        work.push_back(r);
      }
    }
  }
  while (!work.empty()) {
    const uint32_t s = work.back();
    work.pop_back();
    for (uint32_t i = use_start[s]; i < use_start[s + 1]; ++i) {
      const uint32_t a = users[i];
      if (pending[a] == kNever || --pending[a] != 0 || holds[owner[a]]) continue;
      holds[owner[a]] = true;
      work.push_back(owner[a]);
    }
  }
  return holds;
}

void Grammar::Builder::check_defined() const {
  for (uint32_t r = 0; r < n_rules(); ++r) {
    if (!defined[r]) {
      throw GrammarError(
          fmt::format("rule '{}' is used but never defined; add `{} ::= ...`", name(r), name(r)));
    }
  }
}

std::vector<bool> Grammar::Builder::nullable() const {
  return derivable(false);
}

void Grammar::Builder::check_left_recursion(const std::vector<bool>& null) const {
  // Edges r → s where s can be expanded at the start of r without consuming a byte, as
  // first[first_start[r] .. first_start[r + 1]).
  std::vector<uint32_t> first, first_start(n_rules() + 1, 0);
  for (uint32_t r = 0; r < n_rules(); ++r) {
    for (uint32_t a = rule_alts[r].first; a < rule_alts[r].second; ++a) {
      for (const Element& e : body(a)) {
        if (e.kind != Element::Kind::Rule) break;
        first.push_back(e.index);
        if (!null[e.index]) break;
      }
    }
    first_start[r + 1] = static_cast<uint32_t>(first.size());
  }
  // Depth-first search for a cycle: 0 unvisited, 1 on the path, 2 done.
  std::vector<uint8_t> mark(n_rules(), 0);
  std::vector<std::pair<uint32_t, uint32_t>> path;  // rule, next edge
  for (uint32_t start = 0; start < n_rules(); ++start) {
    if (mark[start]) continue;
    path.emplace_back(start, first_start[start]);
    mark[start] = 1;
    while (!path.empty()) {
      auto& [r, next] = path.back();
      if (next == first_start[r + 1]) {
        mark[r] = 2;
        path.pop_back();
        continue;
      }
      const uint32_t s = first[next++];
      if (mark[s] == 1) {
        throw GrammarError(fmt::format(
            "rule '{}' is left-recursive (it can reach itself without consuming a character), "
            "or repeats something that can be empty; write it right-recursively (x ::= \"a\" x | "
            "\"\") or with * / +",
            name(s)));
      }
      if (mark[s] == 0) {
        mark[s] = 1;
        path.emplace_back(s, first_start[s]);
      }
    }
  }
}

void Grammar::Builder::check_productive(uint32_t root) const {
  if (!derivable(true)[root]) {
    throw GrammarError(fmt::format(
        "rule '{}' can never be completed: every alternative needs a rule that recurses without "
        "an alternative that ends",
        name(root)));
  }
}

}  // namespace baton::grammar
