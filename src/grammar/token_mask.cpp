#include "grammar/token_mask.h"

#include <algorithm>
#include <climits>

namespace baton::grammar {
namespace {

// Masks kept per request: each is n_vocab bits (4 KB for a 32K vocabulary).
constexpr size_t kMaxCachedMasks = 512;
// A shortest completion is spelt out only up to this many bytes: a grammar can make its
// shortest text a gigabyte in thirty lines (each rule twice the one below), and an answer
// that long is past any max_tokens anyway.
constexpr uint32_t kMaxSpelledBytes = 1u << 16;

}  // namespace

VocabTrie::VocabTrie(const std::vector<std::string>& token_bytes, std::vector<int32_t> eog_ids)
    : n_vocab_(static_cast<int32_t>(token_bytes.size())),
      bytes_(token_bytes),
      eog_ids_(std::move(eog_ids)) {
  // Sorting the ids by their bytes gives the depth-first order directly: a node is a distinct
  // prefix, and its subtree is the run of tokens that share it.
  std::vector<int32_t> order;
  for (int32_t id = 0; id < n_vocab_; ++id) {
    const bool eog = std::find(eog_ids_.begin(), eog_ids_.end(), id) != eog_ids_.end();
    if (!bytes_[id].empty() && !eog) order.push_back(id);
  }
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return bytes_[a] != bytes_[b] ? bytes_[a] < bytes_[b] : a < b;
  });
  std::vector<uint32_t> open;  // node index at each depth of the current path
  const std::string* prev = nullptr;
  for (int32_t id : order) {
    const std::string& s = bytes_[id];
    size_t common = 0;
    if (prev) {
      while (common < s.size() && common < prev->size() && s[common] == (*prev)[common]) ++common;
    }
    for (size_t d = common; d < open.size(); ++d) {
      nodes_[open[d]].subtree_end = static_cast<uint32_t>(nodes_.size());
    }
    open.resize(common);
    for (size_t d = common; d < s.size(); ++d) {
      open.push_back(static_cast<uint32_t>(nodes_.size()));
      nodes_.push_back(Node{static_cast<uint8_t>(s[d]), static_cast<uint16_t>(d + 1), 0, 0, 0});
    }
    Node& leaf = nodes_[open.back()];
    if (leaf.n_tokens == 0) leaf.first_token = static_cast<uint32_t>(token_ids_.size());
    token_ids_.push_back(id);
    ++leaf.n_tokens;
    max_depth_ = std::max(max_depth_, s.size());
    prev = &s;
  }
  for (uint32_t n : open) nodes_[n].subtree_end = static_cast<uint32_t>(nodes_.size());
}

TokenMatcher::TokenMatcher(std::shared_ptr<const Grammar> g, std::shared_ptr<const VocabTrie> vocab)
    : matcher_(std::move(g)), vocab_(std::move(vocab)) {
  path_.resize(vocab_->max_depth() + 1);
}

bool TokenMatcher::is_eog(int32_t token) const {
  const auto& e = vocab_->eog_ids();
  return std::find(e.begin(), e.end(), token) != e.end();
}

std::pair<int32_t, size_t> VocabTrie::longest_prefix(std::string_view text) const {
  std::pair<int32_t, size_t> best{-1, 0};
  size_t first = 0, end = nodes_.size();  // the children of the node matched so far
  for (size_t d = 0; d < text.size(); ++d) {
    size_t c = first;
    while (c < end && nodes_[c].byte != static_cast<uint8_t>(text[d])) c = nodes_[c].subtree_end;
    if (c >= end) break;
    if (nodes_[c].n_tokens > 0) best = {token_ids_[nodes_[c].first_token], d + 1};
    first = c + 1;
    end = nodes_[c].subtree_end;
  }
  return best;
}

void TokenMatcher::compute(std::vector<uint64_t>& bits, uint32_t max_min_bytes, uint32_t* worst) {
  bits.assign((vocab_->n_vocab() + 63) / 64, 0);
  const auto& nodes = vocab_->nodes();
  const auto& ids = vocab_->token_ids();
  path_[0] = matcher_.state();
  for (size_t i = 0; i < nodes.size();) {
    const VocabTrie::Node& n = nodes[i];
    const Matcher::StateId s = matcher_.next(path_[n.depth - 1], n.byte);
    if (s == Matcher::kDead) {
      i = n.subtree_end;
      continue;
    }
    path_[n.depth] = s;
    const uint32_t rest = matcher_.min_bytes_to_end(s);
    if (n.n_tokens > 0 && rest <= max_min_bytes) {
      if (worst) *worst = std::max(*worst, rest);
      for (uint32_t k = 0; k < n.n_tokens; ++k) {
        const int32_t id = ids[n.first_token + k];
        bits[id >> 6] |= uint64_t{1} << (id & 63);
      }
    }
    ++i;
  }
  if (matcher_.can_end()) {
    for (int32_t id : vocab_->eog_ids()) {
      if (id >= 0 && id < vocab_->n_vocab()) bits[id >> 6] |= uint64_t{1} << (id & 63);
    }
  }
}

void TokenMatcher::compute_charged(std::vector<uint64_t>& bits, uint32_t max_min_bytes,
                                   uint32_t* worst) {
  const uint64_t before = matcher_.work();
  matcher_.begin_work(credit_);
  try {
    compute(bits, max_min_bytes, worst);
  } catch (...) {
    credit_ = 0;
    throw;
  }
  credit_ -= matcher_.work() - before;
}

const std::vector<uint64_t>& TokenMatcher::allowed() {
  // One mask is one step of the matcher's budget, however many transitions it needs; the
  // budget refills by the mean per step, so a grammar that needs fresh work for every token
  // (an ambiguous one) cannot hold the thread for long, while one that caches can burst.
  credit_ = std::min(GrammarLimits::kStepWork, credit_ + GrammarLimits::kMeanStepWork);
  const Matcher::StateId s = matcher_.state();
  auto it = masks_.find(s);
  if (it == masks_.end()) {
    if (masks_.size() >= kMaxCachedMasks) masks_.clear();
    it = masks_.emplace(s, Mask{}).first;
    try {
      compute_charged(it->second.bits, Grammar::kNoEnd - 1, &it->second.worst_min_bytes);
    } catch (...) {
      masks_.erase(it);
      throw;
    }
  }
  const Mask& mask = it->second;
  const int64_t after = max_tokens_ - accepted_ - 1;  // tokens that may follow this one
  if (max_tokens_ < 0 || after < 0 || mask.worst_min_bytes <= after) return mask.bits;
  // Near the end of the budget: only tokens whose completion still fits, and the first token
  // of the shortest completion, which always does.
  compute_charged(budget_bits_, static_cast<uint32_t>(after), nullptr);
  if (plan_.empty() && matcher_.min_bytes_to_end(matcher_.state()) <= kMaxSpelledBytes) {
    plan_ = matcher_.shortest_completion();
  }
  const int32_t first = vocab_->longest_prefix(plan_).first;
  if (first >= 0) budget_bits_[first >> 6] |= uint64_t{1} << (first & 63);
  // Past saving (a limit below the shortest completion, which the server refuses up front):
  // the grammar alone, and the answer is cut at its limit.
  if (std::all_of(budget_bits_.begin(), budget_bits_.end(), [](uint64_t w) { return w == 0; })) {
    return mask.bits;
  }
  return budget_bits_;
}

void TokenMatcher::limit_tokens(int32_t max_tokens) {
  max_tokens_ = max_tokens;
  accepted_ = 0;
  plan_.clear();
}

int32_t TokenMatcher::min_tokens_to_end() const {
  const uint32_t bytes = matcher_.min_bytes_to_end(matcher_.state());
  if (bytes == Grammar::kNoEnd) return INT32_MAX;
  if (bytes > kMaxSpelledBytes) {
    // Not spelt: a lower bound, every token as long as the longest one.
    const auto longest = static_cast<uint32_t>(std::max<size_t>(1, vocab_->max_depth()));
    return static_cast<int32_t>((bytes + longest - 1) / longest);
  }
  const std::string text = matcher_.shortest_completion();
  int32_t tokens = 0;
  for (size_t at = 0; at < text.size(); ++tokens) {
    const size_t len = vocab_->longest_prefix(std::string_view(text).substr(at)).second;
    if (len == 0) return INT32_MAX;
    at += len;
  }
  return tokens;
}

bool TokenMatcher::accept(int32_t token) {
  if (token < 0 || token >= vocab_->n_vocab()) return false;
  if (is_eog(token)) return matcher_.can_end();
  const std::string& b = vocab_->bytes(token);
  if (b.empty()) return false;
  const uint64_t epoch = matcher_.cache_epoch();
  const bool ok = matcher_.accept(b);
  // The matcher drops its cached states when it grows too large; state ids then change.
  if (matcher_.cache_epoch() != epoch) masks_.clear();
  if (ok) {
    ++accepted_;
    // Still on the plan: the rest of it is a completion from here.
    if (plan_.starts_with(b)) {
      plan_.erase(0, b.size());
    } else {
      plan_.clear();
    }
  }
  return ok;
}

bool TokenMatcher::accept_bytes(std::string_view bytes) {
  plan_.clear();
  const uint64_t epoch = matcher_.cache_epoch();
  const bool ok = matcher_.accept(bytes);
  if (matcher_.cache_epoch() != epoch) masks_.clear();
  return ok;
}

}  // namespace baton::grammar
