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
  if (o.min_ngram < 1) return {};
  for (int64_t n = std::min<int64_t>(o.max_ngram, static_cast<int64_t>(context.size()));
       n >= o.min_ngram; --n) {
    const auto suffix = context.last(static_cast<size_t>(n));
    for (auto out = outputs_.rbegin(); out != outputs_.rend(); ++out) {
      auto d = continuation_after(*out, suffix, o.max_draft);
      if (!d.empty()) return d;
    }
  }
  return {};
}

}  // namespace baton::sched
