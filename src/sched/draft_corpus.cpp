#include "sched/draft_corpus.h"

#include <algorithm>

namespace baton::sched {

void DraftCorpus::add(std::span<const int32_t> output) {
  if (max_tokens_ <= 0 || output.size() < 2) return;
  if (static_cast<int64_t>(output.size()) > max_tokens_) {
    output = output.subspan(output.size() - static_cast<size_t>(max_tokens_));
  }
  outputs_.emplace_back(output.begin(), output.end());
  tokens_ += static_cast<int64_t>(output.size());
  while (tokens_ > max_tokens_ && !outputs_.empty()) {
    tokens_ -= static_cast<int64_t>(outputs_.front().size());
    outputs_.pop_front();
  }
}

std::vector<int32_t> DraftCorpus::draft(std::span<const int32_t> context,
                                        const NgramDraftOptions& o) const {
  const auto len = static_cast<int64_t>(context.size());
  if (o.max_draft < 1 || o.min_ngram < 1) return {};
  for (int64_t n = std::min<int64_t>(o.max_ngram, len); n >= o.min_ngram; --n) {
    const auto suffix = context.subspan(static_cast<size_t>(len - n));
    for (auto out = outputs_.rbegin(); out != outputs_.rend(); ++out) {
      const auto& t = *out;
      // Newest first within an output too; something must follow the occurrence.
      for (int64_t start = static_cast<int64_t>(t.size()) - n - 1; start >= 0; --start) {
        if (!std::equal(suffix.begin(), suffix.end(), t.begin() + start)) continue;
        const int64_t from = start + n;
        const int64_t to = std::min<int64_t>(static_cast<int64_t>(t.size()), from + o.max_draft);
        return {t.begin() + from, t.begin() + to};
      }
    }
  }
  return {};
}

}  // namespace baton::sched
