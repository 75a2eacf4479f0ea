// Schemas a hostile client could send to make the compiler recurse per character, expand
// exponentially or work quadratically: each compiles to a grammar of bounded size, or is refused
// with a GrammarError that names the limit.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "grammar/grammar.h"
#include "grammar/json_schema.h"
#include "support/time_budget.h"

namespace baton::grammar {
namespace {

using ojson = nlohmann::ordered_json;

size_t count_rules(const std::string& gbnf) {
  return static_cast<size_t>(std::count(gbnf.begin(), gbnf.end(), '\n'));
}

// The compile deadline is the last resort on a slow machine, not what these tests are about:
// they give it room (times the build's slowdown: sanitizer builds compile several times slower)
// so that the limit under test, not the clock, is what stops a compile.
SchemaLimits roomy_clock() {
  SchemaLimits limits;
  limits.max_time = baton::testing::scaled(std::chrono::seconds(20));
  return limits;
}

std::string schema_error_of(const ojson& schema, const SchemaLimits& limits = roomy_clock()) {
  try {
    json_schema_to_gbnf(schema, limits);
  } catch (const GrammarError& e) {
    return e.what();
  }
  return "";
}

std::string quoted(const std::string& s) {
  return "\"" + s + "\"";
}

TEST(JsonSchemaLimits, LongPropertyNameWithAdditionalProperties) {
  const std::string name(30000, 'k');
  ojson schema = {{"type", "object"},
                  {"properties", {{name, {{"type", "integer"}}}}},
                  {"additionalProperties", {{"type", "string"}}}};
  const std::string gbnf = json_schema_to_gbnf(schema, roomy_clock());
  // The name is written once; the extra-key rules do not grow with it.
  EXPECT_LT(gbnf.size(), 2 * name.size() + 4000);
  EXPECT_LT(count_rules(gbnf), 30u);
  auto g = Grammar::parse(gbnf);
  EXPECT_TRUE(matches(g, "{" + quoted(name) + ":1}"));
  EXPECT_TRUE(matches(g, "{" + quoted(std::string(64, 'k')) + ":\"x\"}"));  // not the name
  EXPECT_FALSE(matches(g, "{" + quoted(name) + ":\"x\"}"));

  // Many long names, some in two-byte characters.
  ojson props = ojson::object();
  std::string e_acute = "\xC3\xA9";
  for (int i = 0; i < 200; ++i) {
    std::string n;
    for (int k = 0; k < 2000; ++k) n += e_acute;
    props[n + std::to_string(i)] = {{"type", "null"}};
  }
  schema = {{"type", "object"}, {"properties", props}, {"additionalProperties", true}};
  EXPECT_LT(count_rules(json_schema_to_gbnf(schema, roomy_clock())),
            2u * 200 + 20);  // two per property
}

TEST(JsonSchemaLimits, ExtraKeysStillAvoidShortNamesNextToLongOnes) {
  ojson schema = {{"type", "object"},
                  {"properties",
                   {{std::string(64, 'a'), {{"type", "integer"}}},
                    {std::string(65, 'a'), {{"type", "integer"}}},
                    {"b", {{"type", "integer"}}}}},
                  {"additionalProperties", {{"type", "string"}}}};
  auto g = Grammar::parse(json_schema_to_gbnf(schema, roomy_clock()));
  EXPECT_FALSE(matches(g, "{" + quoted(std::string(64, 'a')) + ":\"x\"}"));  // the name
  EXPECT_FALSE(matches(g, R"({"b":"x"})"));
  EXPECT_TRUE(matches(g, "{" + quoted(std::string(63, 'a')) + ":\"x\"}"));
  EXPECT_TRUE(matches(g, R"({"bb":"x","":"y"})"));
  EXPECT_FALSE(matches(g, "{" + quoted(std::string(65, 'a')) + ":\"x\"}"));  // too long a key
}

// d0 ... d{levels-1}: each an anyOf of two $refs to the next, each with its own sibling keyword.
ojson ref_chain(int levels, const std::function<ojson(int, int)>& sibling, const ojson& last) {
  ojson defs = ojson::object();
  for (int i = 0; i < levels; ++i) {
    const std::string next = "#/$defs/d" + std::to_string(i + 1);
    ojson a = sibling(i, 0), b = sibling(i, 1);
    a["$ref"] = next;
    b["$ref"] = next;
    defs["d" + std::to_string(i)] = {{"anyOf", ojson::array({a, b})}};
  }
  defs["d" + std::to_string(levels)] = last;
  return {{"$defs", defs}, {"$ref", "#/$defs/d0"}};
}

TEST(JsonSchemaLimits, RefChainWithSiblingsCompilesEachCombinationOnce) {
  const ojson schema =
      ref_chain(30,
                [](int, int k) {
                  return k == 0 ? ojson{{"minLength", 1}} : ojson{{"maxLength", 50}};
                },
                {{"type", "string"}});
  const std::string gbnf = json_schema_to_gbnf(schema, roomy_clock());
  EXPECT_LT(count_rules(gbnf), 400u);
  auto g = Grammar::parse(gbnf);
  EXPECT_TRUE(matches(g, R"("abc")"));
  EXPECT_TRUE(matches(g, R"("")"));  // d0's second alternative allows it
  EXPECT_FALSE(matches(g, "12"));

  // The same sibling on every $ref: one combination per level.
  const ojson typed =
      ref_chain(30,
                [](int, int) {
                  return ojson{{"type", "object"}};
                },
                {{"type", "object"}, {"properties", {{"a", {{"type", "integer"}}}}}});
  const std::string typed_gbnf = json_schema_to_gbnf(typed, roomy_clock());
  EXPECT_LT(count_rules(typed_gbnf), 100u);
  EXPECT_TRUE(matches(Grammar::parse(typed_gbnf), R"({"a":1})"));

  // Sibling keywords written in another order are the same combination.
  ojson swapped = ref_chain(30,
                            [](int, int) {
                              return ojson{{"maxLength", 50}, {"minLength", 1}};
                            },
                            {{"type", "string"}});
  swapped["$defs"]["d0"]["anyOf"][0] = {
      {"minLength", 1}, {"maxLength", 50}, {"$ref", "#/$defs/d1"}};
  EXPECT_LT(count_rules(json_schema_to_gbnf(swapped, roomy_clock())), 100u);
}

TEST(JsonSchemaLimits, RefChainWhoseCombinationsMultiplyIsRefusedByLimit) {
  // Each level adds a different required name, so every path is a distinct combination: 2^30.
  const ojson grows =
      ref_chain(30,
                [](int i, int k) {
                  return ojson{{"required", ojson::array({fmt::format("p{}-{}", i, k)})}};
                },
                {{"type", "object"}, {"additionalProperties", true}});
  const std::string e = schema_error_of(grows);
  EXPECT_NE(e.find("more than"), std::string::npos) << e;
  // Combinations whose grammars coincide (properties of a string) still count as work, or
  // run into the clock on a slow machine.
  const ojson same =
      ref_chain(30,
                [](int i, int k) {
                  return ojson{{"properties", {{fmt::format("p{}-{}", i, k), {{"type", "null"}}}}}};
                },
                {{"type", "string"}});
  const std::string s = schema_error_of(same);
  EXPECT_TRUE(s.find("subschemas") != std::string::npos ||
              s.find("longer than") != std::string::npos)
      << s;
}

TEST(JsonSchemaLimits, RecursiveRefWithSiblingsCompiles) {
  const ojson schema = ojson::parse(R"({"$defs":{"n":{"type":"object","properties":{
      "v":{"type":"integer"},"next":{"$ref":"#/$defs/n","required":["v"]}}}},
      "$ref":"#/$defs/n"})");
  auto g = Grammar::parse(json_schema_to_gbnf(schema, roomy_clock()));
  EXPECT_TRUE(matches(g, R"({"next":{"v":1,"next":{"v":2}}})"));
  EXPECT_FALSE(matches(g, R"({"next":{"next":{"v":2}}})"));  // v is required below the top
}

TEST(JsonSchemaLimits, ManyPropertiesSharingAPrefix) {
  const std::string prefix(40, 'p');
  ojson props = ojson::object();
  for (int i = 0; i < 8000; ++i) {
    props[prefix + std::to_string(i)] = {{"type", "object"},
                                         {"properties", {{"x", {{"type", "integer"}}}}}};
  }
  ojson required = ojson::array();
  for (int i = 0; i < 8000; i += 2) required.push_back(prefix + std::to_string(i));
  const ojson schema = {{"type", "object"}, {"properties", props}, {"required", required}};
  const auto t0 = std::chrono::steady_clock::now();
  const std::string gbnf = json_schema_to_gbnf(schema, roomy_clock());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Generous (the quadratic search took 7.3 s optimised): unique names are found without
  // trying every earlier one.
  EXPECT_LT(s, 5.0 * baton::testing::kBuildSlowdown);
  EXPECT_LT(gbnf.size(), 8000u * 400);
  EXPECT_LE(count_rules(gbnf), 3u * 8000 + 20);
  EXPECT_NE(gbnf.find(prefix.substr(0, 34) + "-2 ::="), std::string::npos);  // names stay short

  // With additionalProperties, each name adds rules that rule it out as an extra key; past the
  // rule budget that is a clear error.
  ojson extra = schema;
  extra["additionalProperties"] = true;
  const std::string e = schema_error_of(extra);
  if (!e.empty()) {
    EXPECT_NE(e.find("grammar rules"), std::string::npos) << e;
  }
}

ojson merged_objects(int n) {
  ojson a = ojson::object(), b = ojson::object();
  for (int i = 0; i < n; ++i) {
    a["a" + std::to_string(i)] = {{"type", "integer"}};
    b["b" + std::to_string(i)] = {{"type", "integer"}};
  }
  a["shared"] = {{"type", "number"}};
  b["shared"] = {{"type", "integer"}};
  return {{"allOf", ojson::array({{{"type", "object"}, {"properties", a}},
                                  {{"properties", b}, {"required", {"shared"}}}})}};
}

TEST(JsonSchemaLimits, MergingLargePropertySets) {
  // allOf of two objects of 4000 properties each: the merge indexes names instead of looking
  // each one up in the other's list.
  const std::string gbnf = json_schema_to_gbnf(merged_objects(4000), roomy_clock());
  EXPECT_LE(count_rules(gbnf), 2u * 8001 + 20);
  auto g = Grammar::parse(json_schema_to_gbnf(merged_objects(50), roomy_clock()));
  EXPECT_TRUE(matches(g, R"({"a3":1,"shared":2,"b7":2})"));  // in the merged order
  EXPECT_FALSE(matches(g, R"({"shared":2.5})"));
  EXPECT_FALSE(matches(g, R"({"a3":1})"));
}

TEST(JsonSchemaLimits, ManyAllOfPartsOnOneProperty) {
  // Each part adds a bound to the same property: the merged property is one list of parts, not
  // a nest of 20000 allOfs.
  ojson parts = ojson::array();
  for (int i = 0; i < 20000; ++i) {
    parts.push_back({{"properties", {{"p", {{"type", "integer"}, {"maximum", 40000 - i}}}}}});
  }
  const ojson schema = {{"type", "object"}, {"required", {"p"}}, {"allOf", parts}};
  auto g = Grammar::parse(json_schema_to_gbnf(schema, roomy_clock()));
  EXPECT_TRUE(matches(g, R"({"p":20001})"));
  EXPECT_FALSE(matches(g, R"({"p":20002})"));
}

TEST(JsonSchemaLimits, DeepNestingIsRefusedByDepth) {
  ojson props = {{"type", "string"}}, items = props, any = props;
  for (int i = 0; i < 500; ++i) {
    props = {{"type", "object"}, {"properties", {{"x", props}}}};
    items = {{"type", "array"}, {"items", items}};
    any = {{"anyOf", ojson::array({any, {{"type", "null"}}})}};
  }
  for (const ojson* s : {&props, &items, &any}) {
    const std::string e = schema_error_of(*s);
    EXPECT_NE(e.find("nests deeper than 64 levels"), std::string::npos) << e;
  }
  // A chain of $defs, each referring to the next, nests as deep.
  ojson defs = ojson::object();
  for (int i = 0; i < 500; ++i) {
    defs["d" + std::to_string(i)] = {
        {"type", "object"}, {"properties", {{"x", {{"$ref", fmt::format("#/$defs/d{}", i + 1)}}}}}};
  }
  defs["d500"] = {{"type", "null"}};
  EXPECT_NE(schema_error_of({{"$defs", defs}, {"$ref", "#/$defs/d0"}}).find("nests deeper"),
            std::string::npos);
}

TEST(JsonSchemaLimits, WideAnyOfOfRefs) {
  ojson defs = {{"x", {{"type", "object"}, {"properties", {{"a", {{"type", "integer"}}}}}}}};
  ojson plain = ojson::array(), with_siblings = ojson::array(), many_defs = ojson::array();
  for (int i = 0; i < 5000; ++i) {
    plain.push_back({{"$ref", "#/$defs/x"}, {"description", std::to_string(i)}});
    with_siblings.push_back({{"$ref", "#/$defs/x"}, {"required", {"a"}}});
    defs["d" + std::to_string(i)] = {{"const", i}};
    many_defs.push_back({{"$ref", fmt::format("#/$defs/d{}", i)}});
  }
  for (const ojson* alts : {&plain, &with_siblings}) {
    const std::string gbnf =
        json_schema_to_gbnf({{"$defs", defs}, {"anyOf", *alts}}, roomy_clock());
    EXPECT_LT(count_rules(gbnf), 20u);
  }
  // 5000 distinct targets: one rule each.
  const std::string gbnf =
      json_schema_to_gbnf({{"$defs", defs}, {"anyOf", many_defs}}, roomy_clock());
  EXPECT_LT(count_rules(gbnf), 5020u);
  auto g = Grammar::parse(gbnf);
  EXPECT_TRUE(matches(g, "4999"));
  EXPECT_FALSE(matches(g, "5000"));
  // A union with keywords beside it: each alternative's $ref takes them as siblings.
  const std::string based =
      json_schema_to_gbnf({{"$defs", defs}, {"type", "object"}, {"anyOf", plain}}, roomy_clock());
  EXPECT_LT(count_rules(based), 20u);
}

TEST(JsonSchemaLimits, WideOneOfIsRefused) {
  ojson alts = ojson::array();
  for (int i = 0; i < 5000; ++i) alts.push_back({{"const", i}});
  const std::string e = schema_error_of({{"oneOf", alts}});
  EXPECT_NE(e.find("'oneOf' at / has 5000 alternatives"), std::string::npos) << e;
  alts.erase(alts.begin() + 1000, alts.end());
  EXPECT_EQ(schema_error_of({{"oneOf", alts}}), "");
}

TEST(JsonSchemaLimits, EachLimitIsNamedInItsError) {
  const ojson schema = ojson::parse(R"({"type":"object","properties":{
      "a":{"type":"object","properties":{"b":{"type":"array","items":{"type":"string"}}}},
      "c":{"enum":["x","y"]}}})");
  SchemaLimits rules;
  rules.max_rules = 3;
  EXPECT_NE(schema_error_of(schema, rules).find("more than 3 grammar rules"), std::string::npos);
  SchemaLimits bytes;
  bytes.max_bytes = 200;
  EXPECT_NE(schema_error_of(schema, bytes).find("past 200 bytes"), std::string::npos);
  SchemaLimits subschemas;
  subschemas.max_subschemas = 2;
  EXPECT_NE(schema_error_of(schema, subschemas).find("more than 2 subschemas"), std::string::npos);
  SchemaLimits time;
  time.max_time = std::chrono::milliseconds(0);
  EXPECT_NE(schema_error_of(schema, time).find("longer than 0 ms"), std::string::npos);
  EXPECT_EQ(schema_error_of(schema), "");
}

TEST(JsonSchemaLimits, BudgetsSpanAllSchemasOfOneBuilder) {
  // A tool grammar adds one schema per tool: the work of all of them is bounded together.
  SchemaLimits limits;
  limits.max_subschemas = 10;
  SchemaGrammarBuilder b(limits);
  const ojson schema = ojson::parse(R"({"type":"object","properties":{"a":{"type":"integer"},
                                       "b":{"type":"string"}}})");
  b.add_schema(schema, "t1");
  b.add_schema(schema, "t2");
  b.add_schema(schema, "t3");
  EXPECT_THROW(b.add_schema(schema, "t4"), GrammarError);
}

}  // namespace
}  // namespace baton::grammar
