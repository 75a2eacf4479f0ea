#include <gtest/gtest.h>

#include "grammar/grammar.h"
#include "grammar/regex_gbnf.h"

namespace baton::grammar {
namespace {

std::shared_ptr<const Grammar> R(std::string_view pattern, RegexOptions opts = {}) {
  return Grammar::parse("root ::= " + regex_to_gbnf(pattern, opts) + "\n");
}

RegexOptions search() {
  return {.search = true};
}
RegexOptions json(bool search = false) {
  return {.search = search, .json_string_body = true};
}

std::string error_of(std::string_view pattern, RegexOptions opts = {}) {
  try {
    regex_to_gbnf(pattern, opts);
  } catch (const GrammarError& e) {
    return e.what();
  }
  return "";
}

TEST(Regex, EmailLike) {
  auto g = R(R"([a-z]+@[a-z]+\.com)");
  EXPECT_TRUE(matches(g, "bob@example.com"));
  EXPECT_FALSE(matches(g, "bob@examplexcom"));
  EXPECT_FALSE(matches(g, "Bob@example.com"));
  EXPECT_FALSE(matches(g, "@example.com"));
  EXPECT_FALSE(matches(g, "bob@example.com "));
}

TEST(Regex, CountsAndDigits) {
  auto g = R(R"(\d{3}-\d{4})");
  EXPECT_TRUE(matches(g, "555-1234"));
  EXPECT_FALSE(matches(g, "55-1234"));
  EXPECT_FALSE(matches(g, "555-12345"));
  EXPECT_FALSE(matches(g, "abc-defg"));
  auto bounded = R("a{2,3}");
  EXPECT_FALSE(matches(bounded, "a"));
  EXPECT_TRUE(matches(bounded, "aa"));
  EXPECT_TRUE(matches(bounded, "aaa"));
  EXPECT_FALSE(matches(bounded, "aaaa"));
  auto open = R("a{2,}b{,1}");
  EXPECT_TRUE(matches(open, "aaaaab"));
  EXPECT_FALSE(matches(open, "ab"));
  EXPECT_FALSE(matches(open, "aabb"));
}

TEST(Regex, AlternationGroupsAndStar) {
  auto g = R("(ab|cd)*e?");
  EXPECT_TRUE(matches(g, ""));
  EXPECT_TRUE(matches(g, "abcd"));
  EXPECT_TRUE(matches(g, "cdabe"));
  EXPECT_TRUE(matches(g, "e"));
  EXPECT_FALSE(matches(g, "abc"));
  EXPECT_FALSE(matches(g, "ee"));
  auto groups = R("(?:x|y)+z(?<tail>!{2})");
  EXPECT_TRUE(matches(groups, "xyyxz!!"));
  EXPECT_FALSE(matches(groups, "z!!"));
  EXPECT_FALSE(matches(groups, "xz!"));
}

TEST(Regex, AlternativesAreOneExpression) {
  // The expression is embedded in larger rules: its alternatives must stay grouped.
  auto g = Grammar::parse("root ::= \"<\" " + regex_to_gbnf("ab|c|") + " \">\"");
  EXPECT_TRUE(matches(g, "<ab>"));
  EXPECT_TRUE(matches(g, "<c>"));
  EXPECT_TRUE(matches(g, "<>"));
  EXPECT_FALSE(matches(g, "<abc>"));
}

TEST(Regex, ClassesAndShorthands) {
  auto not_digit = R("[^0-9]");
  EXPECT_TRUE(matches(not_digit, "x"));
  EXPECT_TRUE(matches(not_digit, "\n"));
  EXPECT_TRUE(matches(not_digit, "\xC3\xA9"));
  EXPECT_FALSE(matches(not_digit, "5"));
  EXPECT_FALSE(matches(not_digit, ""));
  auto mixed = R(R"([\d_\-a-c]+\s\S\W\w)");
  EXPECT_TRUE(matches(mixed, "1_-b\t\xC3\xA9!Z"));
  EXPECT_FALSE(matches(mixed, "d \xC3\xA9!Z"));
  EXPECT_FALSE(matches(mixed, "1  !Z"));
  EXPECT_FALSE(matches(mixed, "1 xyZ"));
  auto space = R(R"(\s+)");
  EXPECT_TRUE(matches(space, " \t\n\r\f\v"));
  EXPECT_FALSE(matches(space, "\xC2\xA0"));
  // Complements print as negated classes rather than as every other range.
  EXPECT_EQ(regex_to_gbnf(R"(\W)"), "[^0-9A-Z_a-z]");
  EXPECT_EQ(regex_to_gbnf("."), "[^\\n]");
  auto edge = R(R"([-a][\]^-][\b])");
  EXPECT_TRUE(matches(edge, "-^\b"));
  EXPECT_TRUE(matches(edge, "a]\b"));
  EXPECT_FALSE(matches(edge, "b]\b"));
}

TEST(Regex, DotIsAnyCharacterButNewline) {
  auto g = R(".");
  EXPECT_TRUE(matches(g, "a"));
  EXPECT_TRUE(matches(g, "\xF0\x9F\x98\x80"));
  EXPECT_FALSE(matches(g, "\n"));
  EXPECT_FALSE(matches(g, "ab"));
}

TEST(Regex, UnicodeLiteralsAndEscapes) {
  auto g = R("\xC3\xA9+");
  EXPECT_TRUE(matches(g, "\xC3\xA9\xC3\xA9"));
  EXPECT_FALSE(matches(g, "e"));
  auto greek = R("[\xCE\xB1-\xCF\x89]{2}");
  EXPECT_TRUE(matches(greek, "\xCE\xB1\xCF\x89"));
  EXPECT_FALSE(matches(greek, "ab"));
  auto escaped = R(R"(\u00e9\u{1F600}\uD83D\uDE00\x41\t)");
  EXPECT_TRUE(matches(escaped,
                      "\xC3\xA9\xF0\x9F\x98\x80\xF0\x9F\x98\x80"
                      "A\t"));
}

TEST(Regex, EscapedPunctuationAndLiteralBraces) {
  auto g = R(R"(\.\*\\\/\-\(\)\[\]\{\}\?\+\|\^\$"x{y}a{,)");
  EXPECT_TRUE(matches(g, R"(.*\/-()[]{}?+|^$"x{y}a{,)"));
  EXPECT_FALSE(matches(g, R"(a*\/-()[]{}?+|^$"x{y}a{,)"));
}

TEST(Regex, LazyQuantifiersHaveTheSameLanguage) {
  auto g = R("a+?b??c{1,2}?d*?");
  EXPECT_TRUE(matches(g, "ac"));
  EXPECT_TRUE(matches(g, "aabccddd"));
  EXPECT_FALSE(matches(g, "bc"));
  EXPECT_FALSE(matches(g, "accc"));
}

TEST(Regex, AnchorsMatchTheWholeOutputAnyway) {
  auto g = R("^abc$");
  EXPECT_TRUE(matches(g, "abc"));
  EXPECT_FALSE(matches(g, "xabc"));
  EXPECT_FALSE(matches(g, "abcx"));
  auto alts = R("^a|b$");
  EXPECT_TRUE(matches(alts, "a"));
  EXPECT_TRUE(matches(alts, "b"));
  EXPECT_FALSE(matches(alts, "ab"));
}

TEST(Regex, RepeatsOfPossiblyEmptyGroupsAreRewritten) {
  // A repeated expression comes back in parentheses, ready to be embedded.
  EXPECT_EQ(regex_to_gbnf("(a*)*"), "(\"a\"*)");
  EXPECT_EQ(regex_to_gbnf("(a+)+"), "(\"a\"+)");
  auto g = R("(a|b?)+c");
  EXPECT_TRUE(matches(g, "c"));
  EXPECT_TRUE(matches(g, "abbac"));
  EXPECT_FALSE(matches(g, "abx"));
  auto pairs = R("(a?b?)*c(|x){2,}");
  EXPECT_TRUE(matches(pairs, "c"));
  EXPECT_TRUE(matches(pairs, "abbaabcxxx"));
  EXPECT_FALSE(matches(pairs, "acy"));
  auto empty = R("(){3}()*(|)+");
  EXPECT_TRUE(matches(empty, ""));
  EXPECT_FALSE(matches(empty, "a"));
}

TEST(RegexSearch, UnanchoredPatternsMatchAnywhere) {
  auto g = R(R"(\d)", search());
  EXPECT_TRUE(matches(g, "ab1cd"));
  EXPECT_TRUE(matches(g, "1"));
  EXPECT_FALSE(matches(g, "abc"));
  auto anchored = R(R"(^\d+$)", search());
  EXPECT_TRUE(matches(anchored, "123"));
  EXPECT_FALSE(matches(anchored, "a1"));
  EXPECT_FALSE(matches(anchored, "1a"));
  auto start = R("^ab", search());
  EXPECT_TRUE(matches(start, "abxx"));
  EXPECT_FALSE(matches(start, "xab"));
  auto mixed = R("x$|^y", search());
  EXPECT_TRUE(matches(mixed, "..x"));
  EXPECT_TRUE(matches(mixed, "y.."));
  EXPECT_FALSE(matches(mixed, "x.."));
  EXPECT_FALSE(matches(mixed, "..y"));
}

TEST(RegexJson, CharactersAreSpelledAsJsonText) {
  auto g = R("a\"b\\\\c\n", json());
  EXPECT_TRUE(matches(g, R"(a\"b\\c\n)"));
  EXPECT_FALSE(matches(g, "a\"b\\c\n"));
  auto quote = R(R"(a"b)", json());
  EXPECT_TRUE(matches(quote, R"(a\"b)"));
  EXPECT_FALSE(matches(quote, R"(a"b)"));
}

TEST(RegexJson, ClassesSplitIntoPlainAndEscapedMembers) {
  auto g = R("[^a]", json());
  EXPECT_TRUE(matches(g, R"(\\)"));
  EXPECT_TRUE(matches(g, R"(\n)"));
  EXPECT_TRUE(matches(g, R"(\")"));
  EXPECT_TRUE(matches(g, R"(\u0001)"));
  EXPECT_TRUE(matches(g, R"(\u001f)"));
  EXPECT_TRUE(matches(g, "b"));
  EXPECT_FALSE(matches(g, "a"));
  EXPECT_FALSE(matches(g, "\n"));
  EXPECT_FALSE(matches(g, "\""));
  EXPECT_FALSE(matches(g, "\\"));
  EXPECT_FALSE(matches(g, R"(\u000a)"));  // \n has one spelling
  auto ws = R(R"(\s)", json());
  EXPECT_TRUE(matches(ws, R"(\t)"));
  EXPECT_TRUE(matches(ws, R"(\u000b)"));
  EXPECT_TRUE(matches(ws, " "));
  EXPECT_FALSE(matches(ws, "\t"));
}

TEST(RegexJson, SearchFillerIsJsonStringText) {
  auto g = R("x", json(true));
  EXPECT_TRUE(matches(g, R"(a\"\\\u0000x\n)"));
  EXPECT_FALSE(matches(g, R"(a"x)"));
  EXPECT_FALSE(matches(g, "a\nx"));
  EXPECT_FALSE(matches(g, R"(ab)"));
}

TEST(RegexErrors, UnsupportedOrMalformedPatternsAreRefused) {
  for (const char* p : {"(a",      "a)",       "[a",
                        "*a",      "a|+b",     "(a)\\1",
                        "(?=a)",   "(?!a)",    "(?<=a)b",
                        "(?<!a)b", "\\bx",     "x\\B",
                        "a{3,2}",  "a{10001}", "a^b",
                        "(^a)",    "a$b",      "(?i)a",
                        "a**",     "\\k<n>",   "\\p{L}",
                        "[z-a]",   "[\\d-z]",  "\\",
                        "\\q",     "\\uD800",  "[^\\x00-\\u{10FFFF}]",
                        "\xC3"}) {
    EXPECT_NE(error_of(p).find("regex: "), std::string::npos) << p;
  }
  EXPECT_NE(error_of("(a)\\1").find("backreference \\1 is not supported"), std::string::npos);
  EXPECT_NE(error_of("(?=a)").find("lookahead"), std::string::npos);
  EXPECT_NE(error_of("x(?<!a)").find("lookbehind"), std::string::npos);
  EXPECT_NE(error_of("\\b").find("word boundary"), std::string::npos);
  EXPECT_NE(error_of("a{3,2}").find("maximum below its minimum"), std::string::npos);
  EXPECT_NE(error_of("[a").find("unterminated class"), std::string::npos);
  EXPECT_NE(error_of("*a").find("nothing to repeat"), std::string::npos);
  EXPECT_NE(error_of("a^b").find("anchor '^'"), std::string::npos);
  EXPECT_NE(error_of("(a").find("never closed"), std::string::npos);
  EXPECT_NE(error_of("a)").find("unbalanced ')'"), std::string::npos);
}

}  // namespace
}  // namespace baton::grammar
