// Hostile grammars: each is refused with an error that names the limit, or runs in bounded
// work and memory. Sizes are the ones that crashed or stalled a server before the limits.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>

#include "grammar/gbnf_helpers.h"
#include "grammar/grammar.h"
#include "grammar/json_schema.h"
#include "grammar/token_mask.h"

namespace baton::grammar {
namespace {

using baton::testing::error_of;

bool has(const std::string& s, std::string_view part) {
  return s.find(part) != std::string::npos;
}

TEST(GrammarLimits, DeepNestingIsRefusedNamingTheLimit) {
  const std::string deep =
      "root ::= " + std::string(30000, '(') + "\"a\"" + std::string(30000, ')') + "\n";
  const std::string e = error_of(deep);
  EXPECT_TRUE(has(e, "nested deeper than 1000")) << e;
  EXPECT_TRUE(has(e, "line 1 column")) << e;
  // At the limit it still parses.
  const size_t n = GrammarLimits::kMaxNesting;
  auto g = Grammar::parse("root ::= " + std::string(n, '(') + "\"a\"" + std::string(n, ')'));
  EXPECT_TRUE(matches(g, "a"));
}

// root ::= r1, r1 ::= r2, ..., the last ::= "a" (plus `suffix` after each use): a chain of
// `n` rules, written from the root down or from the last rule up.
std::string chain(int n, bool forward, const std::string& suffix = "") {
  std::vector<std::string> lines;
  lines.push_back("root ::= r1" + suffix);
  for (int i = 1; i < n - 1; ++i) lines.push_back(fmt::format("r{} ::= r{}{}", i, i + 1, suffix));
  lines.push_back(fmt::format("r{} ::= \"a\"", n - 1));
  std::string text;
  if (forward) {
    for (const auto& l : lines) text += l + "\n";
  } else {
    for (auto it = lines.rbegin(); it != lines.rend(); ++it) text += *it + "\n";
  }
  return text;
}

TEST(GrammarLimits, LongRuleChainsCompileInLinearTimeAndMatchWithoutRecursion) {
  constexpr int kRules = 200000;
  for (bool forward : {true, false}) {
    const auto t0 = std::chrono::steady_clock::now();
    auto g = Grammar::parse(chain(kRules, forward));
    // A fixed point that takes a pass per link needs minutes here; a worklist, well under a
    // second. The bound only tells the two apart.
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(20)) << forward;
    EXPECT_EQ(g->n_rules(), size_t{kRules});
    Matcher m(g);  // the start state is the closure down the whole chain
    EXPECT_LE(m.work(), size_t{4 * kRules} + GrammarLimits::kStateWork);
    EXPECT_TRUE(m.accept("a"));
    EXPECT_TRUE(m.must_end());
  }
}

TEST(GrammarLimits, AChainOfNestedCallsReturnsThroughEveryFrameWithoutRecursion) {
  // Each rule but the last calls the next and then reads "b": a stack as deep as the chain.
  constexpr int kRules = 50000;
  auto g = Grammar::parse(chain(kRules, false, " \"b\""));
  Matcher m(g);
  ASSERT_TRUE(m.accept("a"));
  ASSERT_TRUE(m.accept(std::string(kRules - 1, 'b')));
  EXPECT_TRUE(m.can_end());
  EXPECT_FALSE(m.accept("b"));
  // 200000 frames before the first byte are past one step's budget: refused, not run.
  auto deep = Grammar::parse(chain(200000, true, " \"b\""));
  EXPECT_THROW(Matcher{deep}, GrammarBudgetError);
}

TEST(GrammarLimits, RulesAreCountedWhileBuilding) {
  // 99 × 10000 optional items would be 990000 rules (about 200 MB in the builder).
  std::string big = "root ::=";
  for (int i = 0; i < 99; ++i) big += " \"a\"{0,10000}";
  std::string e = error_of(big + "\n");
  EXPECT_TRUE(has(e, "more than 250000 rules")) << e;
  EXPECT_TRUE(has(e, "smaller counts")) << e;
  // Refused while building: an undefined rule, found only when the build completes, is not
  // what the message is about.
  e = error_of(big + " undefined\n");
  EXPECT_TRUE(has(e, "more than 250000 rules")) << e;
  // Well under the limit is fine.
  EXPECT_EQ(error_of("root ::= \"a\"{0,10000} \"b\"{0,10000}"), "");
}

TEST(GrammarLimits, ElementsAndClassesAreCountedWhileBuilding) {
  std::string e = error_of("root ::= \"" + std::string(GrammarLimits::kMaxElements, 'a') + "\"");
  EXPECT_TRUE(has(e, "more than 4000000 elements")) << e;
  std::string classes = "root ::=";
  for (int a = 1, n = 0; a < 128 && n <= 65536; ++a) {
    for (int b = a + 1; b < 128 && n <= 65536; ++b) {
      for (int c = b + 1; c < 128 && n <= 65536; ++c, ++n) {
        classes += fmt::format(" [\\x{:02X}\\x{:02X}\\x{:02X}]", a, b, c);
      }
    }
  }
  e = error_of(classes);
  EXPECT_TRUE(has(e, "more than 65536 distinct character classes")) << e;
}

TEST(GrammarLimits, AStartThatExpandsExponentiallyIsPastTheBudget) {
  // Each level doubles the parses open at the start: 2^40 stacks before the first byte.
  std::string text = "root ::= r1 \"x\" | r1 \"y\"\n";
  for (int i = 1; i < 40; ++i)
    text += fmt::format("r{} ::= r{} \"x\" | r{} \"y\"\n", i, i + 1, i + 1);
  text += "r40 ::= \"a\"\n";
  auto g = Grammar::parse(text);
  try {
    Matcher m(g);
    FAIL() << "the start state fit the budget";
  } catch (const GrammarBudgetError& e) {
    EXPECT_TRUE(has(e.what(), "too many parses open")) << e.what();
  }
}

TEST(GrammarLimits, AWideRuleReachedManyWaysIsCountedEveryTime) {
  // 2000 rules lead, without reading anything, to one rule of 2000 alternatives: 4 million
  // expansions, all but 2000 of them repeats, which cost the time of a fresh one each.
  std::string text = "root ::= a0";
  for (int i = 1; i < 2000; ++i) text += fmt::format(" | a{}", i);
  text += "\nwide ::= \"x0\"";
  for (int i = 1; i < 2000; ++i) text += fmt::format(" | \"x{}\"", i);
  text += "\n";
  for (int i = 0; i < 2000; ++i) text += fmt::format("a{} ::= wide\n", i);
  auto g = Grammar::parse(text);
  EXPECT_THROW(Matcher{g}, GrammarBudgetError);
}

// Every string of one to three lower-case letters, then an end-of-generation token: 18279
// tokens, so a mask walks a trie as wide as a real vocabulary's letter runs.
std::shared_ptr<const VocabTrie> letter_vocab(std::vector<std::string> extra = {}) {
  std::vector<std::string> v;
  for (char a = 'a'; a <= 'z'; ++a) {
    v.emplace_back(1, a);
    for (char b = 'a'; b <= 'z'; ++b) {
      v.push_back(std::string{a, b});
      for (char c = 'a'; c <= 'z'; ++c) v.push_back(std::string{a, b, c});
    }
  }
  for (auto& s : extra) v.push_back(std::move(s));
  v.emplace_back("</s>");
  const auto eog = static_cast<int32_t>(v.size() - 1);
  return std::make_shared<VocabTrie>(v, std::vector<int32_t>{eog});
}

// Picks the allowed token that a fixed pseudo-random order reaches first, like a sampler.
int32_t pick(const std::vector<uint64_t>& bits, int32_t n_vocab, uint64_t& rng) {
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  const auto start = static_cast<int32_t>((rng >> 33) % static_cast<uint64_t>(n_vocab));
  for (int32_t k = 0; k < n_vocab; ++k) {
    const int32_t id = (start + k) % n_vocab;
    if ((bits[id >> 6] >> (id & 63)) & 1) return id;
  }
  return -1;
}

TEST(GrammarLimits, AnAmbiguousGrammarFailsWithinItsWorkBudget) {
  // After each letter in a-m, one more parse stays open: stack sets grow without bound and no
  // state repeats, so every mask is fresh work on a growing set.
  auto g = Grammar::parse("root ::= [a-z]* [a-m] [a-z]{10000}");
  auto vocab = letter_vocab();
  TokenMatcher tm(g, vocab);
  uint64_t rng = 1;
  int steps = 0;
  std::string error;
  for (; steps < 600; ++steps) {
    try {
      const int32_t id = pick(tm.allowed(), vocab->n_vocab(), rng);
      ASSERT_GE(id, 0);
      ASSERT_TRUE(tm.accept(id));
    } catch (const GrammarBudgetError& e) {
      error = e.what();
      break;
    }
    ASSERT_LE(tm.matcher().cache_bytes(), GrammarLimits::kMatcherBytes);
  }
  EXPECT_LT(steps, 600) << "never ran out of budget";
  EXPECT_TRUE(has(error, "too many parses open")) << error;
  // The whole request's work: a burst and the mean per step, never more.
  const uint64_t bound =
      GrammarLimits::kStepWork * 2 + uint64_t(steps + 1) * GrammarLimits::kMeanStepWork;
  EXPECT_LE(tm.matcher().work(), bound);
}

TEST(GrammarLimits, OrdinaryGrammarsStayFarInsideTheBudget) {
  auto vocab = letter_vocab({"{", "}", "\"", ":", ",", " ", "[", "]", "0", "1", "{\"",
                             "\":", "\", \"", "true", "null", "\\", "\\n"});
  const nlohmann::ordered_json schema = nlohmann::ordered_json::parse(R"({
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 300},
                   "tags": {"type": "array", "items": {"type": "string"}},
                   "ok": {"type": "boolean"}},
    "required": ["name", "tags", "ok"], "additionalProperties": false})");
  for (const std::string& gbnf :
       {json_object_gbnf(), json_schema_to_gbnf(schema), std::string("root ::= [a-z]{0,5000}")}) {
    auto g = Grammar::parse(gbnf);
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      TokenMatcher tm(g, vocab);
      uint64_t rng = seed;
      uint64_t peak = 0;
      for (int step = 0; step < 600 && !tm.must_end(); ++step) {
        const uint64_t before = tm.matcher().work();
        const int32_t id = pick(tm.allowed(), vocab->n_vocab(), rng);  // throws past budget
        peak = std::max(peak, tm.matcher().work() - before);
        ASSERT_GE(id, 0);
        if (tm.is_eog(id)) break;
        ASSERT_TRUE(tm.accept(id));
      }
      EXPECT_LT(peak, GrammarLimits::kMeanStepWork) << gbnf.substr(0, 60);
    }
  }
}

TEST(GrammarLimits, TheMatcherCacheStaysWithinItsBytes) {
  // A new state for every byte: 40000 of them would be over 40 MB of transition rows.
  auto g = Grammar::parse("root ::= (\"x\"{10000}){4}");
  Matcher m(g);
  for (int i = 0; i < 40000; ++i) {
    ASSERT_TRUE(m.accept_byte('x')) << i;
    ASSERT_LE(m.cache_bytes(), GrammarLimits::kMatcherBytes);
  }
  EXPECT_GT(m.cache_epoch(), 0u);  // it did drop its cache on the way
  EXPECT_TRUE(m.must_end());
  // The same within one accept() of the whole text.
  Matcher whole(g);
  ASSERT_TRUE(whole.accept(std::string(40000, 'x')));
  EXPECT_LE(whole.cache_bytes(), GrammarLimits::kMatcherBytes);
  EXPECT_TRUE(whole.must_end());
  Matcher refused(g);
  ASSERT_FALSE(refused.accept(std::string(39999, 'x') + "y"));
  EXPECT_GT(refused.cache_epoch(), 0u);
  EXPECT_TRUE(refused.accept_byte('x'));  // still where it started
}

TEST(GrammarLimits, DroppingTheCacheKeepsTheStackOfADeepNesting) {
  // 100000 open parentheses: a frame and a state for each, so the cache is dropped while the
  // frames below the current state are still needed to close them all.
  auto g = Grammar::parse(R"g(root ::= "(" root ")" | "x")g");
  Matcher m(g);
  constexpr int kDepth = 100000;
  for (int i = 0; i < kDepth; ++i) ASSERT_TRUE(m.accept_byte('(')) << i;
  EXPECT_GT(m.cache_epoch(), 0u);
  ASSERT_TRUE(m.accept_byte('x'));
  for (int i = 0; i < kDepth; ++i) {
    ASSERT_FALSE(m.can_end());
    ASSERT_TRUE(m.accept_byte(')')) << i;
  }
  EXPECT_TRUE(m.must_end());
}

}  // namespace
}  // namespace baton::grammar
