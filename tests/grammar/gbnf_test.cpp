#include <gtest/gtest.h>

#include "grammar/gbnf_helpers.h"
#include "grammar/grammar.h"
#include "grammar/token_mask.h"

namespace baton::grammar {
namespace {

using baton::testing::error_of;
using baton::testing::G;

TEST(Gbnf, LiteralsAlternativesAndGroups) {
  auto g = G(R"(root ::= "a" ("b" | "cd")* "e" # comment
)");
  EXPECT_TRUE(matches(g, "ae"));
  EXPECT_TRUE(matches(g, "abcdbe"));
  EXPECT_FALSE(matches(g, "ac"));
  EXPECT_FALSE(matches(g, "abe "));
  EXPECT_FALSE(matches(g, ""));
}

TEST(Gbnf, RulesSpanLinesAndMayBeUsedBeforeDefinition) {
  auto g = G("root ::= item\n  | item \",\" root\nitem ::= [0-9]+\n");
  EXPECT_TRUE(matches(g, "1,22,333"));
  EXPECT_FALSE(matches(g, "1,"));
}

TEST(Gbnf, RepetitionBounds) {
  auto g = G(R"(root ::= "x"{2,4} "y"{,1} "z"{3} "w"{1,})");
  EXPECT_TRUE(matches(g, "xxzzzw"));
  EXPECT_TRUE(matches(g, "xxxxyzzzwww"));
  EXPECT_FALSE(matches(g, "xzzzw"));
  EXPECT_FALSE(matches(g, "xxxxxzzzw"));
  EXPECT_FALSE(matches(g, "xxyyzzzw"));
  EXPECT_FALSE(matches(g, "xxzzz"));
}

TEST(Gbnf, ClassesAreOverCodePoints) {
  auto g = G(R"(root ::= [^"\\]* "\"")");
  EXPECT_TRUE(matches(g, "h\xC3\xA9llo \xF0\x9F\x98\x80\""));
  EXPECT_FALSE(matches(g, "a\\\""));
  EXPECT_FALSE(matches(g, "\xC3\""));          // a lone lead byte is not a character
  EXPECT_FALSE(matches(g, "\xED\xA0\x80\""));  // nor is a surrogate
  auto greek = G(R"(root ::= [α-ω]+ . "\u00e9")");
  EXPECT_TRUE(matches(greek, "\xCE\xB1\xCF\x89x\xC3\xA9"));
  EXPECT_FALSE(matches(greek, "ax\xC3\xA9"));
}

TEST(Gbnf, EscapesInLiterals) {
  auto g = G(R"(root ::= "\x41\n\t\"\\\u00e9\U0001F600")");
  EXPECT_TRUE(matches(g, "A\n\t\"\\\xC3\xA9\xF0\x9F\x98\x80"));
}

TEST(Gbnf, Errors) {
  EXPECT_NE(error_of("root ::= foo").find("rule 'foo' is used but never defined"),
            std::string::npos);
  EXPECT_NE(error_of("item ::= \"a\"").find("no 'root' rule"), std::string::npos);
  EXPECT_NE(error_of("root ::= root \"a\" | \"b\"").find("left-recursive"), std::string::npos);
  EXPECT_NE(error_of("root ::= (\"a\"?)*").find("left-recursive"), std::string::npos);
  EXPECT_NE(error_of("root ::= \"a\" root").find("never be completed"), std::string::npos);
  EXPECT_NE(error_of("root ::= \"abc").find("line 1 column"), std::string::npos);
  EXPECT_NE(error_of("root ::= \"a\"\nroot ::= \"b\"").find("defined twice"), std::string::npos);
  EXPECT_NE(error_of("root ::= (\"a\"").find("expected ')'"), std::string::npos);
  EXPECT_NE(error_of("root ::= \"a\"{3,1}").find("max below min"), std::string::npos);
  EXPECT_NE(error_of("root ::= \"\\q\"").find("unknown escape"), std::string::npos);
  EXPECT_NE(error_of("root ::= [b-a]").find("end before its start"), std::string::npos);
  EXPECT_NE(error_of("root ::= \"a\" )").find("without a matching"), std::string::npos);
}

TEST(Gbnf, DeepRepetitionKeepsAFlatStack) {
  auto g = G(R"(root ::= "[" [a-z]* "]")");
  Matcher m(g);
  ASSERT_TRUE(m.accept("["));
  for (int i = 0; i < 100000; ++i) ASSERT_TRUE(m.accept_byte('q'));
  EXPECT_LE(m.n_states(), 4u);  // one state for "inside", revisited
  EXPECT_TRUE(m.accept("]"));
  EXPECT_TRUE(m.must_end());
}

TEST(Gbnf, RecursionNests) {
  auto g = G(R"g(root ::= "(" root* ")")g");
  EXPECT_TRUE(matches(g, "(()(()()))"));
  EXPECT_FALSE(matches(g, "(()"));
  EXPECT_FALSE(matches(g, "())"));
}

TEST(TokenMask, AllowsExactlyTheTokensThatContinue) {
  std::vector<std::string> vocab = {"", "{", "}", "\"", "a", "ab", "\"}", "x", "{\"", "</s>"};
  auto trie = std::make_shared<VocabTrie>(vocab, std::vector<int32_t>{9});
  TokenMatcher tm(G(R"(root ::= "{" "\"" [ab]* "\"" "}")"), trie);
  auto allowed = [&](int32_t id) { return (tm.allowed()[id >> 6] >> (id & 63)) & 1; };
  EXPECT_TRUE(allowed(1));
  EXPECT_TRUE(allowed(8));
  EXPECT_FALSE(allowed(3));
  EXPECT_FALSE(allowed(0));  // an empty piece (control token) never
  EXPECT_FALSE(allowed(9));  // EOG only at the end
  ASSERT_TRUE(tm.accept(8));
  EXPECT_TRUE(allowed(4));
  EXPECT_TRUE(allowed(5));
  EXPECT_TRUE(allowed(6));
  EXPECT_FALSE(allowed(7));
  EXPECT_FALSE(tm.accept(7));
  ASSERT_TRUE(tm.accept(5));
  ASSERT_TRUE(tm.accept(6));
  EXPECT_TRUE(tm.must_end());
  for (int32_t id = 0; id < 9; ++id) EXPECT_FALSE(allowed(id)) << id;
  EXPECT_TRUE(allowed(9));
  EXPECT_TRUE(tm.accept(9));
}

TEST(TokenMask, ByteTokensCanSplitACharacter) {
  std::vector<std::string> vocab = {"\xC3", "\xA9", "e", "\"", "\xC3\xA9"};
  auto trie = std::make_shared<VocabTrie>(vocab, std::vector<int32_t>{});
  TokenMatcher tm(G(R"(root ::= [é]+ "\"")"), trie);
  auto allowed = [&](int32_t id) { return (tm.allowed()[id >> 6] >> (id & 63)) & 1; };
  EXPECT_TRUE(allowed(0));
  EXPECT_FALSE(allowed(1));
  EXPECT_FALSE(allowed(2));
  EXPECT_TRUE(allowed(4));
  ASSERT_TRUE(tm.accept(0));
  EXPECT_TRUE(allowed(1));
  EXPECT_FALSE(allowed(0));
  EXPECT_FALSE(allowed(3));
}

TEST(Gbnf, RepetitionCountsAreBoundedInTotal) {
  std::string big = "root ::= ";
  for (int i = 0; i < 101; ++i) big += "\"a\"{10000} ";
  EXPECT_NE(error_of(big).find("add up to more than"), std::string::npos);
  EXPECT_EQ(error_of("root ::= (\"a\"{100}){100}"), "");
}

}  // namespace
}  // namespace baton::grammar
