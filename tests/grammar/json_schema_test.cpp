#include "grammar/json_schema.h"

#include <gtest/gtest.h>

#include "grammar/grammar.h"

namespace baton::grammar {
namespace {

using ojson = nlohmann::ordered_json;

std::shared_ptr<const Grammar> S(const char* schema) {
  return Grammar::parse(json_schema_to_gbnf(ojson::parse(schema)));
}

std::string schema_error_of(const char* schema) {
  try {
    Grammar::parse(json_schema_to_gbnf(ojson::parse(schema)));
  } catch (const GrammarError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonSchema, ObjectPropertiesInSchemaOrderWithRequiredAndOptional) {
  auto g = S(R"({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},
                 "tags":{"type":"array","items":{"type":"string"}}},"required":["name"]})");
  EXPECT_TRUE(matches(g, R"({"name": "Ann"})"));
  EXPECT_TRUE(matches(g, R"({"name":"Ann","age":3,"tags":["a","b"]})"));
  EXPECT_TRUE(matches(g, "{\n  \"name\": \"Ann\",\n  \"tags\": []\n}"));
  EXPECT_FALSE(matches(g, R"({"age":3})"));               // name is required
  EXPECT_FALSE(matches(g, R"({"age":3,"name":"Ann"})"));  // schema order
  EXPECT_FALSE(
      matches(g, R"({"name":"Ann","x":1})"));  // no extra keys without additionalProperties
  EXPECT_FALSE(matches(g, R"({"name":"Ann",})"));
  EXPECT_FALSE(matches(g, R"({"name":"Ann","age":3.5})"));
}

TEST(JsonSchema, OnlyOptionalPropertiesCommaRules) {
  auto g = S(R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},
                 "c":{"type":"integer"}}})");
  for (const char* ok :
       {"{}", R"({"b":1})", R"({"a":1,"c":2})", R"({"a":1,"b":2,"c":3})", R"({"c":3})"}) {
    EXPECT_TRUE(matches(g, ok)) << ok;
  }
  for (const char* bad : {R"({,"b":1})", R"({"a":1,,"c":2})", R"({"b":1,"a":2})"}) {
    EXPECT_FALSE(matches(g, bad)) << bad;
  }
}

TEST(JsonSchema, IntegerRangesAreExact) {
  auto g = S(R"({"type":"integer","minimum":-15,"maximum":1234})");
  for (int v = -200; v <= 2500; ++v) {
    EXPECT_EQ(matches(g, std::to_string(v)), v >= -15 && v <= 1234) << v;
  }
  EXPECT_FALSE(matches(g, "007"));
  EXPECT_FALSE(matches(g, "-0"));
  auto ex = S(R"({"type":"integer","exclusiveMinimum":10,"exclusiveMaximum":20})");
  for (int v = 0; v <= 30; ++v) EXPECT_EQ(matches(ex, std::to_string(v)), v > 10 && v < 20) << v;
}

TEST(JsonSchema, UnboundedIntegersStayWithinSixteenDigits) {
  auto g = S(R"({"type":"integer","minimum":0})");
  EXPECT_TRUE(matches(g, "0"));
  EXPECT_TRUE(matches(g, "9999999999999999"));
  EXPECT_FALSE(matches(g, "99999999999999999"));
  EXPECT_FALSE(matches(g, "-1"));
}

TEST(JsonSchema, BoundedNumbersStayInRange) {
  auto g = S(R"({"type":"number","minimum":-1.5,"exclusiveMaximum":3})");
  EXPECT_TRUE(matches(g, "-1"));
  EXPECT_TRUE(matches(g, "2"));
  EXPECT_TRUE(matches(g, "2.75"));
  EXPECT_TRUE(matches(g, "-0.25"));
  EXPECT_FALSE(matches(g, "3"));
  EXPECT_FALSE(matches(g, "3.5"));
  EXPECT_FALSE(matches(g, "-2"));
  EXPECT_FALSE(matches(g, "2.50"));  // fractions end in a non-zero digit
  auto any = S(R"({"type":"number"})");
  EXPECT_TRUE(matches(any, "-12.5e+3"));
  EXPECT_FALSE(matches(any, "01"));
}

TEST(JsonSchema, EnumConstAndTypeUnions) {
  auto g = S(R"({"enum":["red","green",3,null,{"a":[1]}]})");
  EXPECT_TRUE(matches(g, R"("green")"));
  EXPECT_TRUE(matches(g, "null"));
  EXPECT_TRUE(matches(g, R"({"a":[1]})"));
  EXPECT_FALSE(matches(g, R"("blue")"));
  auto c = S(R"({"const":"x"})");
  EXPECT_TRUE(matches(c, R"("x")"));
  EXPECT_FALSE(matches(c, R"("y")"));
  auto u = S(R"({"type":["string","null"]})");
  EXPECT_TRUE(matches(u, "null"));
  EXPECT_TRUE(matches(u, R"("a\n\"b\u00e9")"));
  EXPECT_FALSE(matches(u, "1"));
}

TEST(JsonSchema, RecursiveReferences) {
  auto g = S(R"({"$defs":{"node":{"type":"object","properties":{"value":{"type":"integer"},
      "children":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["value","children"]}},
      "$ref":"#/$defs/node"})");
  EXPECT_TRUE(matches(g, R"({"value":1,"children":[]})"));
  EXPECT_TRUE(
      matches(g, R"({"value":1,"children":[{"value":2,"children":[{"value":3,"children":[]}]}]})"));
  EXPECT_FALSE(matches(g, R"({"value":1,"children":[{"value":2}]})"));
  auto root = S(R"({"type":"object","properties":{"next":{"anyOf":[{"$ref":"#"},{"type":"null"}]}},
                    "required":["next"]})");
  EXPECT_TRUE(matches(root, R"({"next":{"next":null}})"));
}

TEST(JsonSchema, ArraysCountsAndTuples) {
  auto g = S(R"({"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3})");
  EXPECT_FALSE(matches(g, "[1]"));
  EXPECT_TRUE(matches(g, "[1, 2]"));
  EXPECT_TRUE(matches(g, "[1,2,3]"));
  EXPECT_FALSE(matches(g, "[1,2,3,4]"));
  auto t = S(R"({"type":"array","prefixItems":[{"type":"number"},{"type":"string"}],"items":false,
                 "minItems":1})");
  EXPECT_TRUE(matches(t, "[1]"));
  EXPECT_TRUE(matches(t, R"([1,"a"])"));
  EXPECT_FALSE(matches(t, R"([1,"a",2])"));
  EXPECT_FALSE(matches(t, "[]"));
  auto e = S(R"({"type":"array","maxItems":0})");
  EXPECT_TRUE(matches(e, "[]"));
  EXPECT_FALSE(matches(e, "[1]"));
}

TEST(JsonSchema, AdditionalPropertiesNeverDuplicateAKey) {
  auto g = S(R"({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],
                 "additionalProperties":{"type":"string"}})");
  EXPECT_TRUE(matches(g, R"({"a":1,"b":"x","ab":"y","":"z"})"));
  EXPECT_FALSE(matches(g, R"({"a":1,"a":"x"})"));
  EXPECT_FALSE(matches(g, R"({"a":1,"b":2})"));
  auto obj = Grammar::parse(json_object_gbnf());
  EXPECT_TRUE(matches(obj, R"({"x":[1,{"y":null}],"z":"w"})"));
  EXPECT_FALSE(matches(obj, "[1]"));
}

TEST(JsonSchema, StringLengthsCountCharacters) {
  auto g = S(R"({"type":"string","minLength":2,"maxLength":3})");
  EXPECT_FALSE(matches(g, "\"\xC3\xA9\""));  // one character in two bytes
  EXPECT_TRUE(matches(g,
                      "\"\xC3\xA9"
                      "a\""));
  EXPECT_TRUE(matches(g, R"("a\"b")"));
  EXPECT_FALSE(matches(g, R"("abcd")"));
}

TEST(JsonSchema, Formats) {
  auto d = S(R"({"type":"string","format":"date"})");
  EXPECT_TRUE(matches(d, R"("2024-02-28")"));
  EXPECT_TRUE(matches(d, R"("2024-12-31")"));
  EXPECT_FALSE(matches(d, R"("2024-02-30")"));
  EXPECT_FALSE(matches(d, R"("2024-04-31")"));
  EXPECT_FALSE(matches(d, R"("2024-13-01")"));
  auto dt = S(R"({"type":"string","format":"date-time"})");
  EXPECT_TRUE(matches(dt, R"("2024-01-05T10:20:30Z")"));
  EXPECT_TRUE(matches(dt, R"("2024-01-05T23:59:59.5+02:00")"));
  EXPECT_FALSE(matches(dt, R"("2024-01-05T24:00:00Z")"));
  auto u = S(R"({"type":"string","format":"uuid"})");
  EXPECT_TRUE(matches(u, R"("123e4567-e89b-12d3-a456-426614174000")"));
  auto e = S(R"({"type":"string","format":"email"})");
  EXPECT_TRUE(matches(e, R"("ann.lee@example.co.uk")"));
  EXPECT_FALSE(matches(e, R"("ann@")"));
}

TEST(JsonSchema, FormatsWithLengthBounds) {
  auto e = S(R"({"type":"string","format":"email","maxLength":12})");
  EXPECT_TRUE(matches(e, R"("ab@cd.org")"));
  EXPECT_FALSE(matches(e, R"("abcdefg@hijk.org")"));  // 16 characters
  auto d = S(R"({"type":"string","format":"date","minLength":10,"maxLength":10})");
  EXPECT_TRUE(matches(d, R"("2020-01-01")"));
  EXPECT_NE(schema_error_of(R"({"type":"string","format":"uuid","maxLength":20})").find("36 to 36"),
            std::string::npos);
}

TEST(JsonSchema, ExtraKeysAreBounded) {
  auto g = S(R"({"type":"object","additionalProperties":{"type":"integer"}})");
  EXPECT_TRUE(matches(g, "{\"" + std::string(64, 'k') + "\":1}"));
  EXPECT_FALSE(matches(g, "{\"" + std::string(65, 'k') + "\":1}"));
}

TEST(JsonSchema, CombinatorsMergeOrRefuse) {
  auto all =
      S(R"({"allOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},
                            {"properties":{"b":{"type":"string"}},"required":["b"]}]})");
  EXPECT_TRUE(matches(all, R"({"a":1,"b":"x"})"));
  EXPECT_FALSE(matches(all, R"({"a":1})"));
  auto one = S(
      R"({"oneOf":[{"type":"object","properties":{"kind":{"const":"circle"},"r":{"type":"number"}},
      "required":["kind","r"]},{"type":"object","properties":{"kind":{"const":"square"},
      "side":{"type":"number"}},"required":["kind","side"]}]})");
  EXPECT_TRUE(matches(one, R"({"kind":"square","side":2})"));
  EXPECT_FALSE(matches(one, R"({"kind":"square","r":2})"));
  EXPECT_NE(
      schema_error_of(R"({"oneOf":[{"type":"integer"},{"type":"number"}]})").find("may both match"),
      std::string::npos);
  auto nullable = S(R"({"type":"string","nullable":true})");
  EXPECT_TRUE(matches(nullable, "null"));
}

TEST(JsonSchema, PatternWithLengthBounds) {
  // zod: z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/).max(20)
  auto slug = S(R"({"type":"string","pattern":"^[a-z0-9]+(-[a-z0-9]+)*$","maxLength":20})");
  EXPECT_TRUE(matches(slug, R"("ab-c")"));
  EXPECT_TRUE(matches(slug, R"("abcdefghij-klmnopqrs")"));    // 20 characters
  EXPECT_FALSE(matches(slug, R"("abcdefghij-klmnopqrst")"));  // 21
  EXPECT_FALSE(matches(slug, R"("ab--c")"));
  auto id = S(R"({"type":"string","pattern":"ID[0-9]{3}","maxLength":12})");
  EXPECT_TRUE(matches(id, R"("xxID123yy")"));
  EXPECT_FALSE(matches(id, R"("xxID123yyyyyy")"));  // 13
  auto word = S(R"({"type":"string","pattern":"^\\w+$","minLength":2,"maxLength":10})");
  EXPECT_FALSE(matches(word, R"("a")"));
  EXPECT_TRUE(matches(word, R"("ab")"));
  EXPECT_FALSE(matches(word, R"("abcdefghijk")"));
  // Lengths count characters: \" is one.
  auto quote = S(R"({"type":"string","pattern":"a\"","maxLength":3})");
  EXPECT_TRUE(matches(quote, R"("a\"")"));
  EXPECT_TRUE(matches(quote, R"("xa\"")"));
  EXPECT_FALSE(matches(quote, R"("xya\"")"));
  // Inside an object, next to other properties.
  auto obj = S(R"({"type":"object","properties":{"a":{"type":"string","pattern":"^x+$",
                 "minLength":2,"maxLength":3},"b":{"type":"string","pattern":"y","maxLength":2}},
                 "required":["a","b"]})");
  EXPECT_TRUE(matches(obj, R"({"a":"xx","b":"yy"})"));
  EXPECT_FALSE(matches(obj, R"({"a":"x","b":"y"})"));
  EXPECT_FALSE(matches(obj, R"({"a":"xx","b":"yyy"})"));
  const std::string e = schema_error_of(R"({"type":"string","pattern":"^a{5}$","maxLength":3})");
  EXPECT_NE(e.find("no string of at most 3 characters matches the pattern '^a{5}$'"),
            std::string::npos)
      << e;
}

TEST(JsonSchema, UnsupportedOrUnsatisfiableSchemasAreRefusedByName) {
  EXPECT_NE(schema_error_of(
                R"({"type":"object","properties":{"tags":{"type":"array","uniqueItems":true}}})")
                .find("'uniqueItems' at /properties/tags"),
            std::string::npos);
  EXPECT_NE(schema_error_of(R"({"type":"object","patternProperties":{"^x":{}}})")
                .find("'patternProperties'"),
            std::string::npos);
  EXPECT_NE(schema_error_of(R"({"type":"integer","minimum":5,"maximum":4})").find("no value"),
            std::string::npos);
  EXPECT_NE(schema_error_of(R"({"enum":[]})").find("no value"), std::string::npos);
  EXPECT_NE(schema_error_of("false").find("no value"), std::string::npos);
  EXPECT_NE(schema_error_of(R"({"$ref":"#/$defs/missing"})").find("does not point"),
            std::string::npos);
  // A reference chain that points back at itself, inside allOf and oneOf, ends in an error.
  EXPECT_NE(
      schema_error_of(R"({"$defs":{"a":{"$ref":"#/$defs/a"}},"allOf":[{"$ref":"#/$defs/a"}]})")
          .find("never ends"),
      std::string::npos);
  EXPECT_NE(schema_error_of(R"({"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},
                        "oneOf":[{"$ref":"#/$defs/a"},{"type":"null"}]})")
                .find("never ends"),
            std::string::npos);
  EXPECT_NE(schema_error_of(R"({"type":"string","format":"hostname"})").find("format 'hostname'"),
            std::string::npos);
  EXPECT_EQ(schema_error_of(R"({"type":"string","title":"t","description":"d","x-extra":1})"), "");
}

TEST(JsonSchema, SeveralSchemasShareOneGrammar) {
  SchemaGrammarBuilder b;
  const std::string a = b.add_schema(ojson::parse(R"({"type":"integer"})"), "a");
  const std::string s = b.add_schema(ojson::parse(R"({"type":"string"})"), "a");
  EXPECT_NE(a, s);
  EXPECT_THROW(
      b.add_schema(ojson::parse(R"({"type":"object","properties":{"x":{"$ref":"#/nope"}}})"),
                   "bad"),
      GrammarError);
  auto g = Grammar::parse(b.gbnf(a + " \" \" " + s));
  EXPECT_TRUE(matches(g, "12 \"x\""));
}

}  // namespace
}  // namespace baton::grammar
