// tool_choice "auto": output is free until the call opener, held to the call grammar until the
// call is whole, then free again; an opener inside a reasoning block does not count.
#include "constraint/triggered_constraint.h"

#include <gtest/gtest.h>

namespace baton::server {
namespace {

enum Tok { kEos, kHi, kOpen, kNl, kBody, kClose, kX, kThink, kEndThink, kOpenA, kOpenB, kN };

std::shared_ptr<const grammar::VocabTrie> vocab() {
  // In Tok order; the end-of-generation token has no bytes.
  const std::vector<std::string> bytes = {"",         "Hi",           "<tool_call>", "\n",
                                          "{}",       "</tool_call>", "x",           "<think>",
                                          "</think>", "<tool",        "_call>\n"};
  return std::make_shared<grammar::VocabTrie>(bytes, std::vector<int32_t>{kEos});
}

bool allows(constraint::TriggeredConstraint& c, int32_t t) {
  const std::vector<uint64_t>* mask = c.allowed();  // nullptr: anything goes
  return !mask || ((*mask)[t / 64] >> (t % 64)) & 1;
}

constraint::TriggeredConstraint make(constraint::TriggeredConstraint::Reasoning r = {}) {
  auto g = grammar::Grammar::parse(R"(root ::= "<tool_call>\n{}\n</tool_call>")");
  return constraint::TriggeredConstraint("<tool_call>", g, vocab(), std::move(r));
}

TEST(TriggeredConstraint, FreeUntilTheOpenerThenHeldToTheCallThenFreeAgain) {
  auto c = make();
  for (int t = 0; t < kN; ++t) EXPECT_TRUE(allows(c, t)) << t;
  c.accept(kHi);
  c.accept(kOpen);
  ASSERT_TRUE(c.in_call());
  EXPECT_TRUE(allows(c, kNl));
  EXPECT_FALSE(allows(c, kX));
  EXPECT_FALSE(allows(c, kEos));
  for (int t : {kNl, kBody, kNl}) c.accept(t);
  EXPECT_TRUE(c.in_call());
  c.accept(kClose);
  EXPECT_FALSE(c.in_call());
  EXPECT_TRUE(allows(c, kX));
  EXPECT_TRUE(allows(c, kEos));
  EXPECT_FALSE(c.complete());
  c.accept(kOpen);  // a second call triggers anew
  EXPECT_TRUE(c.in_call());
}

TEST(TriggeredConstraint, AnOpenerSplitAcrossTokensTriggersWithWhatFollowsIt) {
  auto c = make();
  c.accept(kOpenA);
  EXPECT_FALSE(c.in_call());
  c.accept(kOpenB);  // "<tool" + "_call>\n": the newline is already inside the call
  ASSERT_TRUE(c.in_call());
  EXPECT_TRUE(allows(c, kBody));
  EXPECT_FALSE(allows(c, kNl));
}

TEST(TriggeredConstraint, AnOpenerWhileThinkingDoesNotTrigger) {
  auto c = make({"<think>", "</think>", false});
  c.accept(kThink);
  c.accept(kOpen);
  EXPECT_FALSE(c.in_call());
  c.accept(kEndThink);
  c.accept(kOpen);
  EXPECT_TRUE(c.in_call());
  auto open = make({"<think>", "</think>", true});  // the prompt opened the block
  open.accept(kOpen);
  EXPECT_FALSE(open.in_call());
}

}  // namespace
}  // namespace baton::server
