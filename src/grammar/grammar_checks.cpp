// The checks a grammar must pass before a Matcher may run it: every rule defined, no left
// recursion (the matcher expands rules without consuming input, so a left-recursive rule would
// expand forever), and a start rule that derives at least one finite text.
#include <fmt/format.h>

#include <algorithm>

#include "grammar/grammar_builder.h"

namespace baton::grammar {
namespace {

// Synthetic rules are named "<hint>~<n>"; messages name the user's rule they came from.
std::string shown(const std::string& name) {
  return name.substr(0, name.find('~'));
}

}  // namespace

void Grammar::Builder::check_defined() const {
  for (uint32_t r = 0; r < rules.size(); ++r) {
    if (!defined[r]) {
      throw GrammarError(
          fmt::format("rule '{}' is used but never defined; add `{} ::= ...`", names[r], names[r]));
    }
  }
}

std::vector<bool> Grammar::Builder::nullable() const {
  std::vector<bool> null(rules.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t r = 0; r < rules.size(); ++r) {
      if (null[r]) continue;
      for (const Sequence& alt : rules[r]) {
        const bool all = std::all_of(alt.begin(), alt.end(), [&](const Element& e) {
          return e.kind == Element::Kind::Rule && null[e.index];
        });
        if (all) {
          null[r] = changed = true;
          break;
        }
      }
    }
  }
  return null;
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
            shown(names[s])));
      }
      if (mark[s] == 0) {
        mark[s] = 1;
        path.emplace_back(s, 0);
      }
    }
  }
}

void Grammar::Builder::check_productive(uint32_t root) const {
  std::vector<bool> prod(rules.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t r = 0; r < rules.size(); ++r) {
      if (prod[r]) continue;
      for (const Sequence& alt : rules[r]) {
        const bool all = std::all_of(alt.begin(), alt.end(), [&](const Element& e) {
          return e.kind != Element::Kind::Rule || prod[e.index];
        });
        if (all) {
          prod[r] = changed = true;
          break;
        }
      }
    }
  }
  if (!prod[root]) {
    throw GrammarError(fmt::format(
        "rule '{}' can never be completed: every alternative needs a rule that recurses without "
        "an alternative that ends",
        shown(names[root])));
  }
}

}  // namespace baton::grammar
