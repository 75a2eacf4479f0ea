#pragma once
// The per-step token mask: which vocabulary tokens keep the output inside the grammar.
//
// The vocabulary's byte strings are laid out once per model as a trie in depth-first order;
// a mask walks it from the matcher's state, skipping a whole subtree as soon as its prefix is
// rejected. Masks are cached per matcher state, so a state met again (inside a string, between
// array items) costs one lookup.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "grammar/grammar.h"

namespace baton::grammar {

class VocabTrie {
 public:
  // token_bytes[id] = the bytes token id stands for; "" = never allowed by a grammar (control
  // tokens). eog_ids end the output: allowed exactly where the grammar may end.
  VocabTrie(const std::vector<std::string>& token_bytes, std::vector<int32_t> eog_ids);

  int32_t n_vocab() const { return n_vocab_; }
  const std::vector<int32_t>& eog_ids() const { return eog_ids_; }
  const std::string& bytes(int32_t id) const { return bytes_[id]; }

  // Depth-first node order: node i's subtree is i .. subtree_end[i] - 1.
  struct Node {
    uint8_t byte = 0;
    uint16_t depth = 0;  // 1 for the first byte of a token
    uint32_t subtree_end = 0;
    uint32_t first_token = 0, n_tokens = 0;  // into token_ids
  };
  const std::vector<Node>& nodes() const { return nodes_; }
  // The longest token whose bytes begin `text`, and their length; {-1, 0} when none does.
  std::pair<int32_t, size_t> longest_prefix(std::string_view text) const;
  const std::vector<int32_t>& token_ids() const { return token_ids_; }
  size_t max_depth() const { return max_depth_; }

 private:
  int32_t n_vocab_ = 0;
  std::vector<std::string> bytes_;
  std::vector<int32_t> eog_ids_;
  std::vector<Node> nodes_;
  std::vector<int32_t> token_ids_;
  size_t max_depth_ = 0;
};

// One generation constrained by a grammar, token by token. Not thread-safe.
class TokenMatcher {
 public:
  TokenMatcher(std::shared_ptr<const Grammar> g, std::shared_ptr<const VocabTrie> vocab);

  // One bit per token id (bit id % 64 of word id / 64): the tokens allowed next, EOG tokens
  // included where the grammar may end. Valid until the next accept. Throws GrammarBudgetError
  // when computing it takes more work than GrammarLimits allows (per mask, and on average).
  // A token is left out when no text completes the grammar after it, and, under a token limit,
  // when the shortest completion after it has more bytes than tokens are left, unless it is the
  // first token of the current shortest completion: so the output ends complete within the
  // limit whenever min_tokens_to_end() <= the limit at the start (every byte being one token of
  // the vocabulary somewhere, as in byte-level BPE and SentencePiece byte fallback).
  const std::vector<uint64_t>& allowed();
  // At most `max_tokens` more tokens will be accepted (counted from this call); < 0: no limit.
  void limit_tokens(int32_t max_tokens);
  // The tokens of a shortest completion from here, spelt by longest-match; INT32_MAX when no
  // text completes it or the vocabulary cannot spell one. Past 64 KiB of shortest text, a
  // lower bound (its bytes over the longest token's).
  int32_t min_tokens_to_end() const;
  // Advances past a token; false (state unchanged) when the grammar does not allow it.
  bool accept(int32_t token);
  // Advances past text that no single token spelled (a trigger found across tokens).
  bool accept_bytes(std::string_view bytes);
  bool can_end() const { return matcher_.can_end(); }
  // Complete, and nothing but an end may follow.
  bool must_end() const { return matcher_.must_end(); }
  bool is_eog(int32_t token) const;

  size_t cached_masks() const { return masks_.size(); }
  const Matcher& matcher() const { return matcher_; }

 private:
  struct Mask {
    std::vector<uint64_t> bits;
    uint32_t worst_min_bytes = 0;  // the most bytes a shortest completion after one of its
                                   // tokens takes: past the budget's reach, it is narrowed
  };
  // Tokens after which a completion of at most `max_min_bytes` bytes exists, into bits.
  void compute(std::vector<uint64_t>& bits, uint32_t max_min_bytes, uint32_t* worst);
  // compute() within the work credit of one mask.
  void compute_charged(std::vector<uint64_t>& bits, uint32_t max_min_bytes, uint32_t* worst);

  Matcher matcher_;
  std::shared_ptr<const VocabTrie> vocab_;
  std::unordered_map<Matcher::StateId, Mask> masks_;
  std::vector<uint64_t> budget_bits_;  // the mask narrowed to the tokens left
  int64_t max_tokens_ = -1;            // from limit_tokens; accepted_ counts from there
  int64_t accepted_ = 0;
  // Near the end of the budget, the completion being followed: its greedy tokens are always
  // allowed, and following it never needs more tokens than it did when it was planned.
  std::string plan_;
  std::vector<Matcher::StateId> path_;          // walk scratch: state at each trie depth
  uint64_t credit_ = GrammarLimits::kStepWork;  // matcher work the next mask may use
};

}  // namespace baton::grammar
