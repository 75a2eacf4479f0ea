#pragma once
// The merge loop both tokenizers share: symbols form a linked list over the text, and a heap
// holds adjacent pairs by priority (SentencePiece: highest score; BPE: lowest rank; ties go to
// the leftmost pair). A pair queued before either side changed is stale and skipped, which keeps
// the whole loop O(n log n).
#include <cstddef>
#include <optional>
#include <queue>
#include <vector>

namespace baton::tokenizer {

struct MergeSymbol {
  int prev, next;
  size_t off, len;  // len 0: merged away
};

// Merges until no adjacent pair can merge. `priority_of(l, r)` gives the priority of joining
// symbols l and r (higher merges first), or nullopt when they cannot merge.
template <typename Priority, typename PriorityOf>
void merge_symbols(std::vector<MergeSymbol>& sym, PriorityOf priority_of) {
  struct Pair {
    Priority priority;
    int left, right;
    size_t len;
  };
  const auto later = [](const Pair& a, const Pair& b) {
    return a.priority < b.priority || (a.priority == b.priority && a.left > b.left);
  };
  std::priority_queue<Pair, std::vector<Pair>, decltype(later)> queue(later);
  const auto try_add = [&](int l, int r) {
    if (l < 0 || r < 0) return;
    if (std::optional<Priority> p = priority_of(l, r)) {
      queue.push({*p, l, r, sym[l].len + sym[r].len});
    }
  };
  for (size_t i = 1; i < sym.size(); ++i) try_add(static_cast<int>(i) - 1, static_cast<int>(i));
  while (!queue.empty()) {
    const Pair b = queue.top();
    queue.pop();
    MergeSymbol& l = sym[b.left];
    MergeSymbol& r = sym[b.right];
    if (l.len == 0 || r.len == 0 || l.len + r.len != b.len) continue;
    l.len += r.len;
    r.len = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }
}

}  // namespace baton::tokenizer
