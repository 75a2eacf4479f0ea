#include "sched/ngram_drafter.h"

#include <algorithm>

namespace baton::sched {

std::vector<int32_t> continuation_after(std::span<const int32_t> text,
                                        std::span<const int32_t> pattern, int32_t max_draft) {
  const auto len = static_cast<int64_t>(text.size());
  const auto n = static_cast<int64_t>(pattern.size());
  if (max_draft < 1 || n < 1) return {};
  for (int64_t start = len - n - 1; start >= 0; --start) {
    if (!std::equal(pattern.begin(), pattern.end(), text.begin() + start)) continue;
    const int64_t from = start + n;
    return {text.begin() + from, text.begin() + std::min(len, from + max_draft)};
  }
  return {};
}

std::vector<int32_t> ngram_draft(std::span<const int32_t> tokens, const NgramDraftOptions& o) {
  if (o.min_ngram < 1) return {};
  for (int64_t n = std::min<int64_t>(o.max_ngram, static_cast<int64_t>(tokens.size()));
       n >= o.min_ngram; --n) {
    // The sequence's own suffix is no earlier occurrence: nothing follows it.
    auto d = continuation_after(tokens, tokens.last(static_cast<size_t>(n)), o.max_draft);
    if (!d.empty()) return d;
  }
  return {};
}

int32_t next_draft_length(int32_t current, int32_t drafted, int32_t accepted, int32_t max_draft) {
  int32_t next = current;
  if (drafted > 0 && accepted == drafted) next = current * 2;
  if (accepted < drafted) next = std::max(1, accepted + 1);
  return std::clamp(next, 1, std::max(1, max_draft));
}

}  // namespace baton::sched
