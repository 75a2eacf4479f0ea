// The checks a grammar must pass before a Matcher may run it: every rule defined, no left
// recursion (the matcher expands rules without consuming input, so a left-recursive rule would
// expand forever), and a start rule that derives at least one finite text.
#include <fmt/format.h>

#include <algorithm>

#include "grammar/grammar_builder.h"

namespace baton::grammar {
namespace {

using Rules = std::vector<Alternatives>;

// The least set of rules such that a rule is in it when one of its alternatives has every
// element in it, a byte class counting as in it when `bytes_hold`. Nullable rules
// (bytes_hold false) and productive ones (true) are this set. A worklist over the rule uses,
// so it costs the grammar's size once, whatever order the rules come in.
std::vector<bool> derivable(const Rules& rules, bool bytes_hold) {
  constexpr uint32_t kNever = 0xFFFFFFFFu;
  std::vector<uint32_t> pending, owner;  // per alternative
  std::vector<uint32_t> use_start(rules.size() + 1, 0);
  for (const Alternatives& alts : rules) {
    for (const Sequence& alt : alts) {
      for (const Element& e : alt) {
        if (e.kind == Element::Kind::Rule) ++use_start[e.index + 1];
      }
    }
  }
  for (size_t r = 0; r < rules.size(); ++r) use_start[r + 1] += use_start[r];
  std::vector<uint32_t> users(use_start.back());  // alternatives using each rule, by rule
  std::vector<uint32_t> fill(use_start.begin(), use_start.end() - 1);
  std::vector<bool> holds(rules.size(), false);
  std::vector<uint32_t> work;
  for (uint32_t r = 0; r < rules.size(); ++r) {
    for (const Sequence& alt : rules[r]) {
      const auto a = static_cast<uint32_t>(pending.size());
      uint32_t n = 0;
      bool never = false;
      for (const Element& e : alt) {
        if (e.kind == Element::Kind::Rule) {
          users[fill[e.index]++] = a;
          ++n;
        } else if (!bytes_hold) {
          never = true;
        }
      }
      pending.push_back(never ? kNever : n);
      owner.push_back(r);
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

}  // namespace

void Grammar::Builder::check_defined() const {
  for (uint32_t r = 0; r < rules.size(); ++r) {
    if (!defined[r]) {
      throw GrammarError(
          fmt::format("rule '{}' is used but never defined; add `{} ::= ...`", name(r), name(r)));
    }
  }
}

std::vector<bool> Grammar::Builder::nullable() const {
  return derivable(rules, false);
}

void Grammar::Builder::check_left_recursion(const std::vector<bool>& null) const {
  // Edges r → s where s can be expanded at the start of r without consuming a byte.
  std::vector<std::vector<uint32_t>> first(rules.size());
  for (uint32_t r = 0; r < rules.size(); ++r) {
    for (const Sequence& alt : rules[r]) {
      for (const Element& e : alt) {
        if (e.kind != Element::Kind::Rule) break;
        first[r].push_back(e.index);
        if (!null[e.index]) break;
      }
    }
  }
  // Depth-first search for a cycle: 0 unvisited, 1 on the path, 2 done.
  std::vector<int> mark(rules.size(), 0);
  std::vector<std::pair<uint32_t, size_t>> path;
  for (uint32_t start = 0; start < rules.size(); ++start) {
    if (mark[start]) continue;
    path.emplace_back(start, 0);
    mark[start] = 1;
    while (!path.empty()) {
      auto& [r, next] = path.back();
      if (next == first[r].size()) {
        mark[r] = 2;
        path.pop_back();
        continue;
      }
      const uint32_t s = first[r][next++];
      if (mark[s] == 1) {
        throw GrammarError(fmt::format(
            "rule '{}' is left-recursive (it can reach itself without consuming a character), "
            "or repeats something that can be empty; write it right-recursively (x ::= \"a\" x | "
            "\"\") or with * / +",
            name(s)));
      }
      if (mark[s] == 0) {
        mark[s] = 1;
        path.emplace_back(s, 0);
      }
    }
  }
}

void Grammar::Builder::check_productive(uint32_t root) const {
  if (!derivable(rules, true)[root]) {
    throw GrammarError(fmt::format(
        "rule '{}' can never be completed: every alternative needs a rule that recurses without "
        "an alternative that ends",
        name(root)));
  }
}

}  // namespace baton::grammar
