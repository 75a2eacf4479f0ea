// A grammar whose mask blows its work budget fails its own request with the reason, in
// bounded work, while the other rows keep getting a token every step: the mask runs on the
// engine loop's thread, so its budget is what keeps one request from stalling the rest.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "support/fake_engine.h"
#include "grammar/grammar.h"
#include "grammar/token_mask.h"
#include "sched/harness.h"
#include "sched/loop_core.h"

namespace baton::sched {
namespace {

using engine::FakeEngine;
using testing::drain_ready;
using testing::greedy;
using testing::make_prompt;
using testing::Outcome;

constexpr int32_t kEog = 2;  // the fake engine's end-of-generation id

// Ids 0 and 1 are control tokens, 2 ends generation, then every string of one to three
// lower-case letters: a mask walks a trie as wide as a real vocabulary's letter runs.
std::shared_ptr<const grammar::VocabTrie> letter_vocab() {
  std::vector<std::string> v = {"", "", ""};
  for (char a = 'a'; a <= 'z'; ++a) {
    v.emplace_back(1, a);
    for (char b = 'a'; b <= 'z'; ++b) {
      v.push_back(std::string{a, b});
      for (char c = 'a'; c <= 'z'; ++c) v.push_back(std::string{a, b, c});
    }
  }
  return std::make_shared<grammar::VocabTrie>(v, std::vector<int32_t>{kEog});
}

// What the server's grammar constraint does, over the test vocabulary.
class GrammarRow : public TokenConstraint {
 public:
  GrammarRow(const std::string& gbnf, std::shared_ptr<const grammar::VocabTrie> vocab)
      : m_(grammar::Grammar::parse(gbnf), std::move(vocab)) {}
  const std::vector<uint64_t>* allowed() override {
    ++masks;
    try {
      return &m_.allowed();
    } catch (const grammar::GrammarBudgetError& e) {
      throw engine::ConstraintBudgetExceeded(e.what());
    }
  }
  void accept(int32_t token) override {
    if (!m_.accept(token)) throw std::runtime_error("token outside the grammar");
  }
  bool complete() const override { return m_.must_end(); }
  uint64_t work() const { return m_.matcher().work(); }
  int masks = 0;

 private:
  grammar::TokenMatcher m_;
};

TEST(ConstraintBudget, AnAmbiguousGrammarFailsItsRequestAndTheOthersKeepStepping) {
  auto vocab = letter_vocab();
  engine::FakeEngineConfig ec;
  ec.n_vocab = vocab->n_vocab();
  FakeEngine eng(ec);
  SchedConfig cfg;
  cfg.parallel = 4;
  cfg.ctx = 8192;
  LoopCore core(eng, cfg);

  auto hostile = std::make_shared<GrammarRow>("root ::= [a-z]* [a-m] [a-z]{10000}", vocab);
  auto easy = std::make_shared<GrammarRow>("root ::= [a-z]{0,5000}", vocab);
  const auto p1 = make_prompt(12, 1, ec.n_vocab), p2 = make_prompt(9, 2, ec.n_vocab),
             p3 = make_prompt(7, 3, ec.n_vocab);
  auto req1 = greedy(p1, 600);
  req1.constraint = hostile;
  constexpr int32_t kOthers = 600;  // long enough to run beside the hostile one all its life
  auto req3 = greedy(p3, kOthers);
  req3.constraint = easy;
  auto h1 = core.submit(req1);
  auto h2 = core.submit(greedy(p2, kOthers));
  auto h3 = core.submit(req3);

  Outcome o1, o2, o3;
  std::vector<size_t> tokens2;  // request 2's token count after each step
  size_t others_when_it_failed = 0;
  for (int i = 0; i < 1000 && !(o1.finished && o2.finished && o3.finished); ++i) {
    core.step();
    drain_ready(*h1, o1);
    drain_ready(*h2, o2);
    drain_ready(*h3, o3);
    tokens2.push_back(o2.tokens.size());
    if (o1.finished && !others_when_it_failed) others_when_it_failed = o2.tokens.size();
  }

  ASSERT_TRUE(o1.finished);
  EXPECT_EQ(o1.final.reason, FinishReason::Failed);
  EXPECT_NE(o1.final.error.find("too many parses open"), std::string::npos) << o1.final.error;
  EXPECT_TRUE(o1.final.request_fault);  // the client's grammar, not the server, failed it
  EXPECT_LT(o1.tokens.size(), 600u);
  EXPECT_LT(others_when_it_failed, size_t{kOthers});  // it ran beside them to the end
  // Its work, all steps together: a burst of one step's budget and the mean for each mask.
  EXPECT_LE(hostile->work(), grammar::GrammarLimits::kStepWork +
                                 uint64_t(hostile->masks) * grammar::GrammarLimits::kMeanStepWork);

  // The others: every token, bit for bit what they get alone, one per step once decoding.
  ASSERT_TRUE(o2.finished);
  EXPECT_EQ(o2.final.reason, FinishReason::Length);
  EXPECT_EQ(o2.tokens, eng.reference(p2, kOthers, true));
  const auto first = std::find(tokens2.begin(), tokens2.end(), size_t{1}) - tokens2.begin();
  for (size_t s = first + 1; s < tokens2.size() && tokens2[s - 1] < kOthers; ++s) {
    EXPECT_EQ(tokens2[s], tokens2[s - 1] + 1) << "request 2 missed step " << s;
  }
  ASSERT_TRUE(o3.finished);
  EXPECT_EQ(o3.final.reason, FinishReason::Length);
  EXPECT_EQ(o3.tokens.size(), size_t{kOthers});
  for (int32_t t : o3.tokens) {
    const std::string& text = vocab->bytes(t);
    EXPECT_TRUE(!text.empty() &&
                text.find_first_not_of("abcdefghijklmnopqrstuvwxyz") == std::string::npos)
        << t;
  }
  EXPECT_EQ(core.pool().used(), 0);
}

}  // namespace
}  // namespace baton::sched
