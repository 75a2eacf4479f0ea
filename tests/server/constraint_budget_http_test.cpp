// A json_schema answer planned within max_tokens: sampled at temperature 1 with any budget from
// the schema's shortest output up, it parses and has what the schema requires; a budget below
// that shortest output is a 400 that names both numbers.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/server_fixture.h"

namespace baton::server {
namespace {

using testing::parse;
using testing::ServerHarness;

nlohmann::json schema_body(int max_tokens, int seed) {
  const nlohmann::json schema = {{"type", "object"},
                                 {"properties",
                                  {{"name", {{"type", "string"}}},
                                   {"tags", {{"type", "array"}, {"items", {{"type", "string"}}}}}}},
                                 {"required", {"name", "tags"}}};
  return {{"prompt", "a"},
          {"max_tokens", max_tokens},
          {"temperature", 1.0},
          {"seed", seed},
          {"response_format",
           {{"type", "json_schema"}, {"json_schema", {{"name", "t"}, {"schema", schema}}}}}};
}

TEST(ConstraintBudgetHttp, BelowTheShortestOutputIsA400NamingBothNumbers) {
  ServerHarness h;
  auto c = h.client();
  auto r = c->Post("/v1/completions", schema_body(3, 1).dump(), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 400) << r->body;
  const auto err = parse(r->body)["error"];
  EXPECT_EQ(err["code"], "max_tokens_too_small");
  EXPECT_EQ(err["param"], "max_tokens");
  const std::string msg = err["message"];
  // {"name":"","tags":[]} is 21 bytes, one token each for this vocabulary.
  EXPECT_NE(msg.find("max_tokens is 3"), std::string::npos) << msg;
  EXPECT_NE(msg.find("takes 21 tokens"), std::string::npos) << msg;
}

TEST(ConstraintBudgetHttp, EveryBudgetFromTheShortestOutputUpEndsValid) {
  ServerHarness h;
  auto c = h.client();
  int closed_on_the_last_token = 0;
  for (int seed = 0; seed < 40; ++seed) {
    const int budget = 21 + seed * 2;
    auto r = c->Post("/v1/completions", schema_body(budget, seed).dump(), "application/json");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200) << r->body;
    const auto choice = parse(r->body)["choices"][0];
    const std::string text = choice["text"];
    const int used = parse(r->body)["usage"]["completion_tokens"];
    EXPECT_LE(used, budget);
    if (used == budget) ++closed_on_the_last_token;
    const auto answer = nlohmann::json::parse(text, nullptr, false);
    ASSERT_FALSE(answer.is_discarded()) << "seed " << seed << " budget " << budget << ": " << text;
    EXPECT_TRUE(answer["name"].is_string()) << text;
    EXPECT_TRUE(answer["tags"].is_array()) << text;
  }
  // The strings of random text go on as long as they may: most answers were closed just in
  // time, on their last token, where without the plan they would have been cut off.
  EXPECT_GT(closed_on_the_last_token, 20);
}

}  // namespace
}  // namespace baton::server
