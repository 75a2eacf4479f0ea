// Request fields that change the answer are applied or refused, never accepted and ignored:
// logit_bias (OpenAI's semantics, on chat and completions), llama.cpp's penalty names,
// reasoning_effort, and a 400 for samplers and features this server does not have.
#include <gtest/gtest.h>

#include "server/api/openai_request.h"
#include "server_fixture.h"

namespace baton::server::testing {
namespace {

using nlohmann::json;

std::string text_of(const httplib::Result& r) {
  EXPECT_TRUE(r);
  if (!r) return "";
  EXPECT_EQ(r->status, 200) << r->body;
  return parse(r->body)["choices"][0]["text"].get<std::string>();
}

TEST(LogitBias, MinusHundredOnTheGreedyTokenChangesTheGreedyAnswer) {
  ServerHarness h;
  auto c = h.client();
  const int32_t greedy = h.engine().reference(h.codec().encode("hello", false, false), 1, true)[0];
  json body = {{"prompt", "hello"}, {"max_tokens", 1}, {"temperature", 0}, {"ignore_eos", true}};
  EXPECT_EQ(text_of(post(*c, "/v1/completions", body)), std::string(1, fake_char(greedy)));
  body["logit_bias"] = {{std::to_string(greedy), -100}};
  // The fake model's runner-up is the next id.
  EXPECT_EQ(text_of(post(*c, "/v1/completions", body)),
            std::string(1, fake_char((greedy + 1) % 256)));
}

TEST(LogitBias, PlusHundredForcesATokenOnCompletionsAndChat) {
  ServerHarness h;
  auto c = h.client();
  json body = {{"prompt", "hello"},
               {"max_tokens", 5},
               {"ignore_eos", true},
               {"seed", 3},
               {"logit_bias", {{"65", 100}}}};
  EXPECT_EQ(text_of(post(*c, "/v1/completions", body)), std::string(5, fake_char(65)));
  body = {{"messages", {{{"role", "user"}, {"content", "hi"}}}},
          {"max_tokens", 4},
          {"ignore_eos", true},
          {"n", 2},
          {"logit_bias", {{"66", 100.0}, {"5", -3.5}}}};
  auto r = post(*c, "/v1/chat/completions", body);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = parse(r->body);
  for (const auto& ch : j["choices"]) {
    EXPECT_EQ(ch["message"]["content"], std::string(4, fake_char(66))) << r->body;
  }
}

TEST(LogitBias, InvalidMapsAre400) {
  ServerHarness h;
  auto c = h.client();
  const std::vector<json> bad = {
      json{{"65", 101}},   json{{"65", -100.5}},      json{{"abc", 1}},
      json{{"-1", 1}},     json{{"256", 1}},          json{{"65", "1"}},
      json::array({1, 2}), json{{"7", 1}, {"07", 2}}, json{{"65", true}},
      json("x"),
  };
  for (const char* path : {"/v1/completions", "/v1/chat/completions"}) {
    for (const auto& b : bad) {
      json body = {{"max_tokens", 1}, {"logit_bias", b}};
      if (std::string(path) == "/v1/completions") {
        body["prompt"] = "x";
      } else {
        body["messages"] = {{{"role", "user"}, {"content", "x"}}};
      }
      auto r = post(*c, path, body);
      ASSERT_TRUE(r);
      EXPECT_EQ(r->status, 400) << path << " " << b.dump() << ": " << r->body;
      expect_error_shape(r->body, b.dump());
      EXPECT_EQ(parse(r->body)["error"]["param"], "logit_bias") << r->body;
    }
  }
  for (const json& ok : {json::object(), json(nullptr), json{{"0", 0}, {"255", -100}}}) {
    auto r = post(*c, "/v1/completions", {{"prompt", "x"}, {"max_tokens", 1}, {"logit_bias", ok}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << ok.dump() << ": " << r->body;
  }
}

TEST(UnservedFields, AreRefusedUnlessNeutral) {
  ServerHarness h;
  auto c = h.client();
  struct Case {
    json fields;
    const char* param;  // nullptr: accepted
  };
  const std::vector<Case> cases = {
      {{{"typical_p", 0.5}}, "typical_p"},
      {{{"typical_p", 1}}, nullptr},
      {{{"mirostat", 2}}, "mirostat"},
      {{{"mirostat", 0}}, nullptr},
      {{{"n_predict", 10}}, "n_predict"},
      {{{"n_predict", -1}}, nullptr},
      {{{"min_tokens", 5}}, "min_tokens"},
      {{{"stop_token_ids", {5}}}, "stop_token_ids"},
      {{{"functions", {{{"name", "f"}}}}}, "functions"},
      {{{"function_call", {{"name", "f"}}}}, "function_call"},
      {{{"function_call", "auto"}}, nullptr},
      {{{"modalities", {"text", "audio"}}}, "modalities"},
      {{{"modalities", {"text"}}}, nullptr},
      {{{"audio", {{"voice", "alloy"}}}}, "audio"},
      {{{"web_search_options", json::object()}}, "web_search_options"},
      {{{"verbosity", "low"}}, "verbosity"},
      {{{"verbosity", "medium"}}, nullptr},
      {{{"reasoning_effort", 3}}, "reasoning_effort"},
      {{{"reasoning_effort", "low"}}, nullptr},
      {{{"repeat_penalty", 1.2}, {"repeat_last_n", -1}}, nullptr},
      {{{"repeat_last_n", -2}}, "repeat_last_n"},
  };
  for (const auto& k : cases) {
    json body = {{"messages", {{{"role", "user"}, {"content", "x"}}}}, {"max_tokens", 1}};
    body.update(k.fields);
    auto r = post(*c, "/v1/chat/completions", body);
    ASSERT_TRUE(r);
    if (k.param == nullptr) {
      EXPECT_EQ(r->status, 200) << k.fields.dump() << ": " << r->body;
      continue;
    }
    EXPECT_EQ(r->status, 400) << k.fields.dump() << ": " << r->body;
    EXPECT_EQ(parse(r->body)["error"]["param"], k.param) << r->body;
  }
}

TEST(UnservedFields, LlamaCppPenaltyNamesAndReasoningEffortAreApplied) {
  RequestLimits limits;
  limits.n_vocab = 100;
  auto t = parse_completion_request(
      R"({"prompt":"x","repeat_penalty":1.3,"repeat_last_n":-1,"logit_bias":{"9":-5,"2":7}})",
      limits);
  EXPECT_FLOAT_EQ(t.common.sampling.repetition_penalty, 1.3f);
  EXPECT_EQ(t.common.sampling.penalty_last_n, -1);
  ASSERT_TRUE(t.common.sampling.logit_bias);
  EXPECT_EQ(*t.common.sampling.logit_bias, (engine::LogitBias{{2, 7.0f}, {9, -5.0f}}));  // by id
  auto chat = parse_chat_request(
      R"({"messages":[{"role":"user","content":"x"}],"reasoning_effort":"high"})", limits);
  EXPECT_EQ(chat.chat.template_kwargs["reasoning_effort"], "high");
  chat = parse_chat_request(R"({"messages":[{"role":"user","content":"x"}],)"
                            R"("reasoning_effort":"high",)"
                            R"("chat_template_kwargs":{"reasoning_effort":"low"}})",
                            limits);
  EXPECT_EQ(chat.chat.template_kwargs["reasoning_effort"], "low");
}

}  // namespace
}  // namespace baton::server::testing
