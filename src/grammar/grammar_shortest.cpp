// Shortest completions: for every rule, the fewest bytes it can derive and an alternative that
// does, and for every element the fewest bytes from it to the end of its alternative. A
// constrained answer with a max_tokens budget plans with these (token_mask.cpp): from any parse
// state, the shortest text that completes it is the cheapest stack's remaining elements.
//
// Rule costs are Knuth's generalisation of Dijkstra's algorithm to grammars: an alternative's
// cost is known once every rule it uses is, and the cheapest known alternative settles its
// rule for good, because costs only add up. One pass over the rule uses, a heap of alternatives.
#include <algorithm>
#include <functional>
#include <queue>

#include "grammar/grammar_builder.h"

namespace baton::grammar {

uint32_t Grammar::add_min_bytes(uint32_t a, uint32_t b) {
  constexpr uint64_t kLongest = uint64_t{1} << 30;
  const uint64_t sum = uint64_t{a} + b;
  return a == kNoEnd || b == kNoEnd || sum >= kLongest ? kNoEnd : static_cast<uint32_t>(sum);
}

void Grammar::Builder::plan_shortest(Grammar& g) {
  const std::vector<Element>& el = g.elements_;
  const size_t n_alts = g.alt_starts_.size(), n_rules = g.rule_alts_.size();
  std::vector<uint32_t> owner(n_alts), pending(n_alts, 0), partial(n_alts, 0);
  std::vector<uint32_t> use_start(n_rules + 1, 0);
  for (const Element& e : el) {
    if (e.kind == Element::Kind::Rule) ++use_start[e.index + 1];
  }
  for (size_t r = 0; r < n_rules; ++r) use_start[r + 1] += use_start[r];
  std::vector<uint32_t> users(use_start.back()), fill(use_start.begin(), use_start.end() - 1);
  using Candidate = std::pair<uint32_t, uint32_t>;  // bytes, alternative
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  for (uint32_t r = 0; r < n_rules; ++r) {
    for (uint32_t a = g.rule_alts_[r].first; a < g.rule_alts_[r].second; ++a) {
      owner[a] = r;
      for (uint32_t p = g.alt_starts_[a]; el[p].kind != Element::Kind::End; ++p) {
        if (el[p].kind == Element::Kind::Bytes) {
          partial[a] = add_min_bytes(partial[a], 1);
        } else {
          ++pending[a];
          users[fill[el[p].index]++] = a;
        }
      }
      if (pending[a] == 0 && partial[a] != kNoEnd) heap.emplace(partial[a], a);
    }
  }
  std::vector<uint32_t> rule_bytes(n_rules, kNoEnd);
  g.shortest_alt_.assign(n_rules, kNoEnd);
  while (!heap.empty()) {
    const auto [bytes, a] = heap.top();
    heap.pop();
    const uint32_t r = owner[a];
    if (g.shortest_alt_[r] != kNoEnd) continue;
    g.shortest_alt_[r] = g.alt_starts_[a];
    rule_bytes[r] = bytes;
    for (uint32_t i = use_start[r]; i < use_start[r + 1]; ++i) {
      const uint32_t b = users[i];
      partial[b] = add_min_bytes(partial[b], bytes);
      if (--pending[b] == 0 && partial[b] != kNoEnd && g.shortest_alt_[owner[b]] == kNoEnd) {
        heap.emplace(partial[b], b);
      }
    }
  }
  // Each alternative's elements, back to front: the bytes from each to its End.
  g.min_bytes_.assign(el.size(), 0);
  for (size_t a = 0; a < n_alts; ++a) {
    uint32_t end = g.alt_starts_[a];
    while (el[end].kind != Element::Kind::End) ++end;
    uint32_t after = 0;
    for (uint32_t p = end; p-- > g.alt_starts_[a];) {
      after =
          add_min_bytes(after, el[p].kind == Element::Kind::Bytes ? 1 : rule_bytes[el[p].index]);
      g.min_bytes_[p] = after;
    }
  }
}

void Grammar::spell_shortest(uint32_t pos, std::string& out) const {
  if (min_bytes_[pos] == kNoEnd) return;
  // Positions still to spell, innermost last: a rule's shortest alternative goes before the
  // rest of the alternative that uses it.
  std::vector<uint32_t> todo{pos};
  while (!todo.empty()) {
    const uint32_t p = todo.back();
    todo.pop_back();
    const Element& e = elements_[p];
    if (e.kind == Element::Kind::End) continue;
    todo.push_back(p + 1);
    if (e.kind == Element::Kind::Rule) {
      todo.push_back(shortest_alt_[e.index]);
      continue;
    }
    const std::bitset<256>& c = classes_[e.index];
    int b = 0;
    while (b < 255 && !c.test(static_cast<size_t>(b))) ++b;
    out.push_back(static_cast<char>(b));
  }
}

}  // namespace baton::grammar
