#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

#include "grammar/grammar.h"
#include "grammar/regex_gbnf.h"

namespace baton::grammar {
namespace {

std::shared_ptr<const Grammar> R(std::string_view pattern, RegexOptions opts = {}) {
  return Grammar::parse("root ::= " + regex_to_gbnf(pattern, opts) + "\n");
}

RegexOptions search() {
  RegexOptions o;
  o.search = true;
  return o;
}
RegexOptions json(bool search = false) {
  RegexOptions o;
  o.search = search;
  o.json_string_body = true;
  return o;
}

std::string regex_error_of(std::string_view pattern, RegexOptions opts = {}) {
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

// A length-bounded pattern as a whole grammar: the rules it adds (shared by body, as the JSON
// Schema builder does) follow the root.
std::string bounded_gbnf(std::string_view pattern, RegexOptions opts, int64_t min, int64_t max,
                         size_t* n_rules = nullptr) {
  std::vector<std::pair<std::string, std::string>> rules;
  std::map<std::string, std::string> by_body;
  opts.min_length = min;
  opts.max_length = max;
  opts.add_rule = [&](const std::string& hint, const std::string& body) {
    if (auto it = by_body.find(body); it != by_body.end()) return it->second;
    const std::string name = hint + "-r" + std::to_string(rules.size());
    rules.emplace_back(name, body);
    by_body.emplace(body, name);
    return name;
  };
  std::string text = "root ::= " + regex_to_gbnf(pattern, opts) + "\n";
  for (const auto& [name, body] : rules) text += name + " ::= " + body + "\n";
  if (n_rules) *n_rules = rules.size();
  return text;
}

std::shared_ptr<const Grammar> B(std::string_view pattern, RegexOptions opts, int64_t min,
                                 int64_t max) {
  return Grammar::parse(bounded_gbnf(pattern, std::move(opts), min, max));
}

std::string bounded_error(std::string_view pattern, RegexOptions opts, int64_t min, int64_t max) {
  try {
    bounded_gbnf(pattern, std::move(opts), min, max);
  } catch (const GrammarError& e) {
    return e.what();
  }
  return "";
}

TEST(RegexBounded, SlugWithMaxLength) {
  auto g = B("^[a-z0-9]+(-[a-z0-9]+)*$", {}, 0, 20);
  EXPECT_TRUE(matches(g, "ab-c"));
  EXPECT_TRUE(matches(g, "a"));
  EXPECT_TRUE(matches(g, "abcdefghij-klmnopqrs"));  // 20 characters
  EXPECT_TRUE(matches(g, "a-b-c-d-e-f-g-h-i-j0"));
  EXPECT_FALSE(matches(g, "abcdefghij-klmnopqrst"));  // 21
  EXPECT_FALSE(matches(g, "ab--c"));
  EXPECT_FALSE(matches(g, "ab-"));
  EXPECT_FALSE(matches(g, "-ab"));
  EXPECT_FALSE(matches(g, ""));
  // Every prefix of a 21-character slug up to 20 is still allowed to continue or end.
  Matcher m(g);
  const std::string long_slug = "abcdefghij-klmnopqrst";
  EXPECT_TRUE(m.accept(long_slug.substr(0, 20)));
  EXPECT_TRUE(m.must_end());
}

TEST(RegexBounded, UnanchoredPatternCountsTheWholeString) {
  auto g = B("ID[0-9]{3}", search(), 0, 12);
  EXPECT_TRUE(matches(g, "xxID123yy"));
  EXPECT_TRUE(matches(g, "ID123"));
  EXPECT_TRUE(matches(g, "abcdefgID123"));  // 12
  EXPECT_TRUE(matches(g, "ID123abcdefg"));
  EXPECT_FALSE(matches(g, "abcdefghID123"));  // 13
  EXPECT_FALSE(matches(g, "xxID123yyyyyy"));  // 13
  EXPECT_FALSE(matches(g, "xxID12yy"));
  auto at_least = B("ID[0-9]{3}", search(), 8, -1);
  EXPECT_TRUE(matches(at_least, "xxID123y"));
  EXPECT_TRUE(matches(at_least, "ID123" + std::string(100, 'z')));
  EXPECT_FALSE(matches(at_least, "xID123y"));
  EXPECT_FALSE(matches(at_least, "xxxxxxxxxxID12"));
}

TEST(RegexBounded, MinAndMaxLength) {
  auto g = B(R"(^\w+$)", search(), 2, 10);
  EXPECT_FALSE(matches(g, "a"));
  EXPECT_TRUE(matches(g, "ab"));
  EXPECT_TRUE(matches(g, "abcdefghij"));
  EXPECT_FALSE(matches(g, "abcdefghijk"));
  EXPECT_FALSE(matches(g, "ab-c"));
  // A fixed-width repetition is clamped to the bounds instead of counted by rules.
  size_t n_rules = 0;
  EXPECT_EQ(bounded_gbnf(R"(^\w+$)", search(), 2, 10, &n_rules), "root ::= ([0-9A-Z_a-z]{2,10})\n");
  EXPECT_EQ(n_rules, 0u);
  auto pairs = B("(ab|c)*", {}, 3, 5);
  for (const char* ok : {"abc", "cab", "ccc", "ababc", "ccccc", "abab"}) {
    EXPECT_TRUE(matches(pairs, ok)) << ok;
  }
  for (const char* bad : {"ab", "cc", "cccccc", "ababab", "abca", "aba"}) {
    EXPECT_FALSE(matches(pairs, bad)) << bad;
  }
  // Lengths with gaps: (aa)* has only even lengths.
  auto even = B("(aa)*", {}, 3, 6);
  EXPECT_FALSE(matches(even, "aaa"));
  EXPECT_TRUE(matches(even, "aaaa"));
  EXPECT_TRUE(matches(even, "aaaaaa"));
  EXPECT_FALSE(matches(even, "aa"));
  auto none = B("a*", {}, 0, 0);
  EXPECT_TRUE(matches(none, ""));
  EXPECT_FALSE(matches(none, "a"));
}

TEST(RegexBounded, LengthCountsCharactersNotBytesOrEscapes) {
  auto quote = B(R"(a")", json(), 0, 3);
  EXPECT_TRUE(matches(quote, R"(a\")"));  // two characters in three bytes
  EXPECT_FALSE(matches(quote, R"(a")"));
  auto any = B(".*", json(), 0, 3);
  EXPECT_TRUE(matches(any, R"(\"\\\u0001)"));
  EXPECT_TRUE(matches(any, "\xC3\xA9\xC3\xA9\xC3\xA9"));
  EXPECT_FALSE(matches(any, "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9"));
  EXPECT_FALSE(matches(any, R"(\"\\\u0001a)"));
  auto search_json = B("x", json(true), 2, 2);
  EXPECT_TRUE(matches(search_json, R"(\"x)"));
  EXPECT_TRUE(matches(search_json, R"(x\n)"));
  EXPECT_FALSE(matches(search_json, R"(x)"));
  EXPECT_FALSE(matches(search_json, R"(ax\n)"));
}

// Every string over a small alphabet up to 6 characters: the bounded grammar accepts exactly
// what the unbounded one accepts at an allowed length.
TEST(RegexBounded, AgreesWithThePatternAndALengthCheck) {
  struct Case {
    const char* pattern;
    bool search, json;
    int64_t min, max;
  };
  const Case cases[] = {
      {"^[ab]+(-[ab]+)*$", false, false, 0, 4},
      {"a-", true, false, 0, 4},
      {"a-", true, false, 3, -1},
      {"(ab|b-?)*", false, false, 2, 5},
      {"a{2,3}|-b*", false, false, 1, 3},
      {"^(a|b)*a(a|b)$", true, false, 3, 5},
      {"(a|)(b?-)+", false, false, 2, 4},
      {".-", true, true, 0, 3},
      {"[^a]a", true, true, 2, 4},
      {"(a\"|\n)+", false, true, 1, 3},
  };
  for (const Case& c : cases) {
    RegexOptions o;
    o.search = c.search;
    o.json_string_body = c.json;
    const auto whole = R(c.pattern, o);
    const auto bounded = B(c.pattern, o, c.min, c.max);
    const std::string alphabet = c.json ? "a\"\n" : "ab-";
    std::vector<std::string> level{""};
    for (int len = 0; len <= 6; ++len) {
      std::vector<std::string> next;
      for (const std::string& s : level) {
        std::string text = s;
        if (c.json) {
          text.clear();
          for (char ch : s) text += ch == '"' ? "\\\"" : ch == '\n' ? "\\n" : std::string(1, ch);
        }
        const bool in_range = len >= c.min && (c.max < 0 || len <= c.max);
        EXPECT_EQ(matches(bounded, text), in_range && matches(whole, text))
            << c.pattern << " [" << c.min << "," << c.max << "] on '" << text << "'";
        for (char ch : alphabet) next.push_back(s + ch);
      }
      level = std::move(next);
    }
  }
}

TEST(RegexBounded, EmptyLanguageAndOversizedProductsAreRefused) {
  const std::string e = bounded_error("^a{5}$", search(), 0, 3);
  EXPECT_NE(e.find("no string of at most 3 characters matches the pattern '^a{5}$'"),
            std::string::npos)
      << e;
  EXPECT_THROW(bounded_gbnf("^a{5}$", search(), 0, 3), GrammarError);
  EXPECT_NE(bounded_error("(aa)+", {}, 3, 3).find("exactly 3 characters"), std::string::npos);
  EXPECT_NE(bounded_error("", {}, 1, -1).find("at least 1 character"), std::string::npos);
  EXPECT_NE(bounded_error("abc", {}, 4, 2).find("4 to 2 characters"), std::string::npos);
  // Four interleaved counters over 10000 lengths: more states than the grammar may have.
  EXPECT_NE(bounded_error("(ab|cd|ef|gh)*x", search(), 0, 10000).find("more than 20000"),
            std::string::npos);
  // Without bounds the expression form is unchanged.
  RegexOptions unbounded;
  unbounded.min_length = 0;
  unbounded.max_length = -1;
  EXPECT_EQ(regex_to_gbnf("(a*)*", unbounded), "(\"a\"*)");
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
    EXPECT_NE(regex_error_of(p).find("regex: "), std::string::npos) << p;
  }
  EXPECT_NE(regex_error_of("(a)\\1").find("backreference \\1 is not supported"), std::string::npos);
  EXPECT_NE(regex_error_of("(?=a)").find("lookahead"), std::string::npos);
  EXPECT_NE(regex_error_of("x(?<!a)").find("lookbehind"), std::string::npos);
  EXPECT_NE(regex_error_of("\\b").find("word boundary"), std::string::npos);
  EXPECT_NE(regex_error_of("a{3,2}").find("maximum below its minimum"), std::string::npos);
  EXPECT_NE(regex_error_of("[a").find("unterminated class"), std::string::npos);
  EXPECT_NE(regex_error_of("*a").find("nothing to repeat"), std::string::npos);
  EXPECT_NE(regex_error_of("a^b").find("anchor '^'"), std::string::npos);
  EXPECT_NE(regex_error_of("(a").find("never closed"), std::string::npos);
  EXPECT_NE(regex_error_of("a)").find("unbalanced ')'"), std::string::npos);
}

}  // namespace
}  // namespace baton::grammar
