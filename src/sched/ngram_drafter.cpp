#include "sched/ngram_drafter.h"

#include <algorithm>

namespace baton::sched {

std::vector<int32_t> ngram_draft(std::span<const int32_t> tokens, const NgramDraftOptions& o) {
  const auto len = static_cast<int64_t>(tokens.size());
  if (o.max_draft < 1 || o.min_ngram < 1) return {};
  for (int64_t n = std::min<int64_t>(o.max_ngram, len - 1); n >= o.min_ngram; --n) {
    const auto suffix = tokens.subspan(static_cast<size_t>(len - n));
    // Newest first: the latest occurrence is the likeliest to continue the same way. An
    // occurrence must end before the suffix does, so at least one token follows it.
    for (int64_t start = len - n - 1; start >= 0; --start) {
      if (!std::equal(suffix.begin(), suffix.end(), tokens.begin() + start)) continue;
      const int64_t from = start + n;
      const int64_t to = std::min(len, from + o.max_draft);
      return {tokens.begin() + from, tokens.begin() + to};
    }
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
