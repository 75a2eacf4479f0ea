// The nesting bound every JSON text from a client or a model is parsed under.
#include "util/json_depth.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace baton::util {
namespace {

std::string nested(int depth, char open = '[', char close = ']') {
  return std::string(depth, open) + std::string(depth, close);
}

TEST(JsonNesting, CountsOpenersUpToTheBound) {
  EXPECT_TRUE(json_nesting_within(""));
  EXPECT_TRUE(json_nesting_within("7"));
  EXPECT_TRUE(json_nesting_within(nested(kMaxJsonDepth)));
  EXPECT_FALSE(json_nesting_within(nested(kMaxJsonDepth + 1)));
  EXPECT_TRUE(json_nesting_within(R"({"a":{"b":[1]}})", 3));
  EXPECT_FALSE(json_nesting_within(R"({"a":{"b":[[1]]}})", 3));
  // Siblings do not add up; only nesting does.
  std::string wide = "[";
  for (int i = 0; i < 1000; ++i) wide += std::string(i ? "," : "") + "[[]]";
  EXPECT_TRUE(json_nesting_within(wide + "]", 3));
  // Not even an unterminated opener run is scanned past the bound (25,000 of them).
  EXPECT_FALSE(json_nesting_within(std::string(25000, '[')));
}

TEST(JsonNesting, BracketsInStringsDoNotCount) {
  const std::string in_string =
      "[\"" + std::string(500, '[') + "\\\"" + std::string(500, '{') + "\\\\\"]";
  EXPECT_TRUE(json_nesting_within(in_string, 1));
  EXPECT_TRUE(nlohmann::json::parse(in_string).is_array());
  // An escaped quote does not end the string; the brackets after the real end count.
  EXPECT_FALSE(json_nesting_within(R"(["a\"", [[1]]])", 2));
}

// Closers without openers end any parse where they stand, so they must not make room for
// openers after them.
TEST(JsonNesting, StrayClosersBuyNoDepth) {
  EXPECT_FALSE(json_nesting_within(std::string(1000, ']') + nested(kMaxJsonDepth + 1)));
  EXPECT_FALSE(json_nesting_within("[]]]]]]" + nested(kMaxJsonDepth + 1)));
}

TEST(JsonNesting, ParseJsonText) {
  nlohmann::json j;
  EXPECT_EQ(parse_json_text(R"({"a": [1, 2]})", j), JsonText::ok);
  EXPECT_EQ(j["a"][1], 2);
  EXPECT_EQ(parse_json_text("{oops", j), JsonText::invalid);
  EXPECT_TRUE(j.is_discarded());
  EXPECT_EQ(parse_json_text(nested(kMaxJsonDepth), j), JsonText::ok);
  EXPECT_EQ(parse_json_text(nested(kMaxJsonDepth + 1), j), JsonText::too_deep);
  EXPECT_TRUE(j.is_discarded());

  nlohmann::ordered_json o;
  const std::string hostile = "{\"a\":" + nested(25000) + "}";
  EXPECT_EQ(parse_json_text(hostile, o), JsonText::too_deep);
  EXPECT_TRUE(o.is_discarded());
  EXPECT_EQ(parse_json_text(R"({"z": 1, "a": 2})", o), JsonText::ok);
  EXPECT_EQ(o.begin().key(), "z");  // the document type's own key order

  EXPECT_TRUE(parse_json_bounded<nlohmann::json>(hostile).is_discarded());
  EXPECT_TRUE(parse_json_bounded<nlohmann::json>("[1").is_discarded());
  EXPECT_EQ(parse_json_bounded<nlohmann::json>("[1]"), nlohmann::json::array({1}));
}

}  // namespace
}  // namespace baton::util
