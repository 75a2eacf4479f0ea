#pragma once
// What recent requests generated, for drafting across sessions (--speculate suffix): agents
// repeat themselves across turns and sessions (the same tool call, the same boilerplate), so a
// request whose own sequence has no earlier occurrence of its last tokens may find one here.
// Bounded by tokens held (--spec-corpus-tokens); the oldest outputs go first. Engine-loop thread
// only.
#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "sched/ngram_drafter.h"

namespace baton::sched {

class DraftCorpus {
 public:
  explicit DraftCorpus(int64_t max_tokens) : max_tokens_(max_tokens) {}

  // Keeps an output (the tokens a request generated), dropping the oldest beyond the bound; an
  // output longer than the bound keeps its last max_tokens tokens.
  void add(std::span<const int32_t> output);
  // The tokens that followed the newest occurrence, in any kept output, of the longest suffix of
  // `context` that occurs there (ngram_draft's rule across outputs); empty when none does.
  std::vector<int32_t> draft(std::span<const int32_t> context, const NgramDraftOptions& o) const;

  int64_t tokens() const { return tokens_; }
  size_t outputs() const { return outputs_.size(); }

 private:
  int64_t max_tokens_;
  int64_t tokens_ = 0;
  std::deque<std::vector<int32_t>> outputs_;  // oldest first
};

}  // namespace baton::sched
