// Several choices in one request: n on chat and completions (each with its own randomness,
// the prompt prefilled once), a list of prompts, echo and best_of, streamed and not.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "server_fixture.h"
#include "sse_client.h"

namespace baton::server::testing {
namespace {

using nlohmann::json;

json chat_body(int n, int max_tokens, uint64_t seed) {
  return {{"messages", json::array({{{"role", "user"}, {"content", std::string(90, 'q')}}})},
          {"n", n},
          {"max_tokens", max_tokens},
          {"temperature", 1.0},
          {"ignore_eos", true},
          {"seed", seed}};
}

TEST(HttpChoices, ChatNChoicesDifferAndPrefillThePromptOnce) {
  ServerHarness h;
  auto c = h.client();
  auto r = post(*c, "/v1/chat/completions", chat_body(3, 12, 7));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = parse(r->body);
  ASSERT_EQ(j["choices"].size(), 3u) << r->body;
  std::set<std::string> contents;
  for (size_t i = 0; i < 3; ++i) {
    const auto& ch = j["choices"][i];
    EXPECT_EQ(ch["index"], i);
    EXPECT_EQ(ch["finish_reason"], "length");
    contents.insert(ch["message"]["content"].get<std::string>());
  }
  EXPECT_EQ(contents.size(), 3u) << "each choice samples with its own seed: " << r->body;
  const int prompt = j["usage"]["prompt_tokens"].get<int>();
  EXPECT_GT(prompt, 90);
  EXPECT_EQ(j["usage"]["completion_tokens"], 36) << "usage sums the choices";
  // The two followers reuse the leader's committed blocks: at most a block each is recomputed.
  auto m = h.loop().status().metrics;
  EXPECT_GE(m.prefix_cache_reused_tokens_total, static_cast<uint64_t>(2 * (prompt - 16)))
      << "followers must start from the leader's prefilled prompt";
}

TEST(HttpChoices, SameSeedGivesTheSameChoices) {
  ServerHarness h;
  auto c = h.client();
  auto a = post(*c, "/v1/chat/completions", chat_body(2, 8, 99));
  auto b = post(*c, "/v1/chat/completions", chat_body(2, 8, 99));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(parse(a->body)["choices"], parse(b->body)["choices"]);
}

TEST(HttpChoices, StreamedChoicesCarryTheirIndex) {
  ServerHarness h;
  auto c = h.client();
  json body = chat_body(2, 10, 5);
  auto plain = post(*c, "/v1/chat/completions", body);
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  auto r = post(*c, "/v1/chat/completions", body);
  ASSERT_TRUE(r && plain);
  ASSERT_EQ(r->status, 200);
  std::map<int, std::string> text;
  std::map<int, int> roles, finishes;
  json usage;
  for (const auto& ev : sse_json(r->body)) {
    if (ev.contains("usage") && ev["choices"].empty()) {
      usage = ev["usage"];
      continue;
    }
    ASSERT_EQ(ev["choices"].size(), 1u);
    const auto& ch = ev["choices"][0];
    int i = ch["index"].get<int>();
    if (ch["delta"].contains("role")) ++roles[i];
    if (ch["delta"].contains("content")) text[i] += ch["delta"]["content"].get<std::string>();
    if (!ch["finish_reason"].is_null()) ++finishes[i];
  }
  EXPECT_EQ(roles, (std::map<int, int>{{0, 1}, {1, 1}}));
  EXPECT_EQ(finishes, (std::map<int, int>{{0, 1}, {1, 1}}));
  auto pj = parse(plain->body);
  for (int i = 0; i < 2; ++i) EXPECT_EQ(text[i], pj["choices"][i]["message"]["content"]) << i;
  EXPECT_EQ(usage["completion_tokens"], 20);
  EXPECT_NE(r->body.find("data: [DONE]"), std::string::npos);
}

TEST(HttpChoices, CompletionPromptListTimesN) {
  ServerHarness h;
  auto c = h.client();
  auto r = post(*c, "/v1/completions",
                {{"prompt", json::array({"ab", "cd"})},
                 {"n", 2},
                 {"max_tokens", 5},
                 {"temperature", 0},
                 {"ignore_eos", true}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = parse(r->body);
  ASSERT_EQ(j["choices"].size(), 4u);
  // Choices are grouped by prompt: index = prompt × n + k.
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(j["choices"][i]["index"], i);
    EXPECT_EQ(j["choices"][i]["text"], h.expected_text(i < 2 ? "ab" : "cd", 5, true)) << i;
  }
  EXPECT_EQ(j["usage"]["prompt_tokens"], 4) << "each prompt counted once";
  EXPECT_EQ(j["usage"]["completion_tokens"], 20);
}

TEST(HttpChoices, EchoPrependsThePrompt) {
  ServerHarness h;
  auto c = h.client();
  json body = {{"prompt", "hello"},
               {"max_tokens", 4},
               {"temperature", 0},
               {"echo", true},
               {"ignore_eos", true}};
  auto r = post(*c, "/v1/completions", body);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(parse(r->body)["choices"][0]["text"], "hello" + h.expected_text("hello", 4, true));
  body["stream"] = true;
  auto s = post(*c, "/v1/completions", body);
  ASSERT_TRUE(s);
  std::string text;
  for (const auto& ev : sse_json(s->body)) text += ev["choices"][0]["text"].get<std::string>();
  EXPECT_EQ(text, "hello" + h.expected_text("hello", 4, true));
}

double mean_logprob(const json& choice) {
  const auto& lps = choice["logprobs"]["token_logprobs"];
  double sum = 0;
  for (const auto& v : lps) sum += v.get<double>();
  return lps.empty() ? 0 : sum / static_cast<double>(lps.size());
}

TEST(HttpChoices, BestOfKeepsTheMostLikelyChoices) {
  ServerHarness h;
  auto c = h.client();
  json body = {{"prompt", "xyz"}, {"max_tokens", 6}, {"temperature", 1.5}, {"ignore_eos", true},
               {"seed", 3},       {"n", 2},          {"best_of", 5},       {"logprobs", 0}};
  auto r = post(*c, "/v1/completions", body);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = parse(r->body);
  ASSERT_EQ(j["choices"].size(), 2u);
  EXPECT_EQ(j["choices"][0]["index"], 0);
  EXPECT_EQ(j["choices"][1]["index"], 1);
  EXPECT_GE(mean_logprob(j["choices"][0]), mean_logprob(j["choices"][1]));
  // The same five samples with n = 5: the two kept are the two best of them.
  body["n"] = 5;
  auto all = parse(post(*c, "/v1/completions", body)->body);
  ASSERT_EQ(all["choices"].size(), 5u);
  std::vector<double> means;
  for (const auto& ch : all["choices"]) means.push_back(mean_logprob(ch));
  std::sort(means.rbegin(), means.rend());
  EXPECT_DOUBLE_EQ(mean_logprob(j["choices"][0]), means[0]);
  EXPECT_DOUBLE_EQ(mean_logprob(j["choices"][1]), means[1]);
  // Without logprobs asked for, none are sent even though best_of ranked by them.
  body.erase("logprobs");
  body["n"] = 1;
  auto plain = parse(post(*c, "/v1/completions", body)->body);
  EXPECT_TRUE(plain["choices"][0]["logprobs"].is_null());
}

}  // namespace
}  // namespace baton::server::testing
