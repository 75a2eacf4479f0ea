#pragma once
// Random generation inside a grammar, which is what a model with random weights amounts to once
// its logits are masked: uniform among the allowed tokens, until an end token, a complete
// output, or the token budget.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "grammar/token_mask.h"

namespace baton::testing {

// end_odds > 1: an end token drawn is kept only once in that many draws, as a model that wants
// to go on would rarely end (the token drawn instead is another allowed one).
inline std::string sample_in_grammar(grammar::TokenMatcher& tm, const grammar::VocabTrie& vocab,
                                     int32_t budget, std::mt19937& rng, uint32_t end_odds = 1) {
  std::string out;
  for (int32_t n = 0; n < budget && !tm.must_end(); ++n) {
    const std::vector<uint64_t>& bits = tm.allowed();
    std::vector<int32_t> ok;
    for (int32_t id = 0; id < vocab.n_vocab(); ++id) {
      if (bits[id >> 6] >> (id & 63) & 1) ok.push_back(id);
    }
    if (ok.empty()) break;
    int32_t t = ok[std::uniform_int_distribution<size_t>(0, ok.size() - 1)(rng)];
    if (end_odds > 1 && tm.is_eog(t) && ok.size() > 1 && rng() % end_odds != 0) {
      t = ok[rng() % (ok.size() - 1)];
    }
    if (tm.is_eog(t)) break;
    EXPECT_TRUE(tm.accept(t));
    out += vocab.bytes(t);
  }
  return out;
}

}  // namespace baton::testing
