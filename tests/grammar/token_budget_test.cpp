// A constrained answer with a max_tokens budget ends complete: the matcher knows the shortest
// completion from every state, and near the end of the budget the mask keeps only tokens after
// which a completion still fits.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "grammar/gbnf_helpers.h"
#include "grammar/grammar.h"
#include "grammar/json_schema.h"
#include "grammar/token_mask.h"
#include "support/grammar_sampling.h"

namespace baton::grammar {
namespace {

using baton::testing::G;

std::string shortest_after(const std::shared_ptr<const Grammar>& g, std::string_view prefix) {
  Matcher m(g);
  EXPECT_TRUE(m.accept(prefix)) << prefix;
  return m.shortest_completion();
}

TEST(ShortestCompletion, FromTheStartAndFromInside) {
  auto g = G(R"(root ::= "{" ws "\"a\"" ws ":" ws num ws "}"
num ::= "-"? [1-9] [0-9]* | "0"
ws ::= [ \t]*)");
  const std::string first = shortest_after(g, "");  // "0" and "1" are both one byte
  EXPECT_TRUE(first == "{\"a\":0}" || first == "{\"a\":1}") << first;
  EXPECT_EQ(shortest_after(g, "{ \"a\" : 12"), "}");
  EXPECT_EQ(shortest_after(g, "{\"a\":-"), "1}");
  EXPECT_EQ(shortest_after(g, "{\"a\":0}"), "");
  Matcher m(g);
  EXPECT_EQ(m.min_bytes_to_end(m.state()), 7u);
}

TEST(ShortestCompletion, ClosesNestedRulesInnermostFirst) {
  auto g = G(R"(root ::= item ("," item)*
item ::= "[" root "]" | "x" | "\"" [^"]* "\"")");
  EXPECT_EQ(shortest_after(g, ""), "x");
  EXPECT_EQ(shortest_after(g, "[[x,[\"ab"), "\"]]]");
  EXPECT_EQ(shortest_after(g, "[x,"), "x]");
  // A rule that never ends is not planned through: the other alternative is.
  auto loop = G(R"(root ::= "a" | "b" forever
forever ::= "c" forever)");
  Matcher m(loop);
  EXPECT_EQ(m.min_bytes_to_end(m.state()), 1u);
  ASSERT_TRUE(m.accept("b"));
  EXPECT_EQ(m.min_bytes_to_end(m.state()), Grammar::kNoEnd);
}

// Every single byte is a token, and so are some longer pieces JSON is made of.
std::shared_ptr<const VocabTrie> byte_vocab() {
  std::vector<std::string> v;
  for (int b = 0; b < 256; ++b) v.emplace_back(1, static_cast<char>(b));
  for (const char* piece : {"\"", "\":", "\": \"", "{\"", "\"}", "name", "tags", "[\"", "\"]", ", ",
                            "\", \"", "  ", "true", "12", "ab", "abc", "\\n", "\\u00"}) {
    v.emplace_back(piece);
  }
  const auto eog = static_cast<int32_t>(v.size());
  v.emplace_back("");  // the end-of-generation token: no bytes
  return std::make_shared<VocabTrie>(v, std::vector<int32_t>{eog});
}

TEST(TokenBudget, SeededAnswersEndValidWithinEveryBudgetFromTheMinimumUp) {
  auto vocab = byte_vocab();
  const nlohmann::ordered_json schema = nlohmann::ordered_json::parse(R"({
    "type": "object",
    "properties": {"name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}},
                   "n": {"type": "integer"}},
    "required": ["name", "tags", "n"]})");
  auto g = G(json_schema_to_gbnf(schema));
  const int32_t minimum = TokenMatcher(g, vocab).min_tokens_to_end();
  ASSERT_GT(minimum, 5);
  ASSERT_LT(minimum, 60);
  int unlimited_incomplete = 0;
  for (uint32_t seed = 0; seed < 300; ++seed) {
    std::mt19937 rng(seed);
    const int32_t budget = minimum + static_cast<int32_t>(seed % (3 * minimum + 1));
    TokenMatcher tm(g, vocab);
    tm.limit_tokens(budget);
    const std::string text = testing::sample_in_grammar(tm, *vocab, budget, rng, 8);
    EXPECT_TRUE(matches(g, text)) << "seed " << seed << " budget " << budget << ": " << text;
    // The same sampling without the limit mostly runs out inside a string or an array.
    std::mt19937 rng2(seed);
    TokenMatcher free(g, vocab);
    if (!matches(g, testing::sample_in_grammar(free, *vocab, budget, rng2, 8)))
      ++unlimited_incomplete;
  }
  EXPECT_GT(unlimited_incomplete, 30) << "the test would pass without the budget";
}

// Thirty lines whose shortest text is half a gigabyte: it is measured, never spelt out.
TEST(TokenBudget, AHugeShortestTextIsABoundNotAnAllocation) {
  std::string gbnf = "root ::= r0\n";
  for (int i = 0; i < 28; ++i)
    gbnf += "r" + std::to_string(i) + " ::= r" + std::to_string(i + 1) + " r" +
            std::to_string(i + 1) + "\n";
  gbnf += "r28 ::= \"ab\"\n";
  auto vocab = byte_vocab();
  TokenMatcher tm(G(gbnf), vocab);
  EXPECT_EQ(tm.matcher().min_bytes_to_end(tm.matcher().state()), 1u << 29);
  EXPECT_GE(tm.min_tokens_to_end(), (1 << 29) / 8);  // the longest piece here has 6 bytes
  tm.limit_tokens(100);
  // No plan of 512 MB is made, and a limit nothing fits in leaves the grammar's own mask.
  const std::vector<uint64_t>& bits = tm.allowed();
  EXPECT_TRUE(bits[static_cast<int32_t>('a') >> 6] >> ('a' & 63) & 1);
}

TEST(TokenBudget, MinimumTokensUseTheLongestPieces) {
  auto vocab = byte_vocab();
  TokenMatcher tm(G(R"(root ::= "{\"name\": \"" [a-z]* "\"}")"), vocab);
  EXPECT_EQ(tm.min_tokens_to_end(), 4);  // {" name ": " "} out of 12 bytes
  ASSERT_TRUE(tm.accept(static_cast<int32_t>('{')));
  EXPECT_EQ(tm.min_tokens_to_end(), 4);  // " name ": " "}
  ASSERT_TRUE(tm.accept(static_cast<int32_t>('"')));
  EXPECT_EQ(tm.min_tokens_to_end(), 3);
}

}  // namespace
}  // namespace baton::grammar
