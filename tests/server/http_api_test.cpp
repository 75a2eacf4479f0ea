// Every endpoint of the HTTP server over real sockets, against the fake engine.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "server/api/openai_request.h"
#include "server/http/request_head.h"
#include "server_fixture.h"
#include "sse_client.h"
#include "support/time_budget.h"

namespace baton::server::testing {
namespace {

using nlohmann::json;

TEST(HttpApi, HealthIs503UntilTheModelIsAttached) {
  FixtureOptions o;
  o.attach = false;
  ServerHarness h(o);
  auto c = h.client();
  auto r = c->Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  expect_error_shape(r->body, "/health while loading");
  auto chat =
      post(*c, "/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "x"}}}}});
  ASSERT_TRUE(chat);
  EXPECT_EQ(chat->status, 503);
  EXPECT_TRUE(chat->has_header("Retry-After"));
  h.attach();
  r = c->Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(parse(r->body)["status"], "ok");
}

// A shutdown drains: while running requests finish in their grace, /health answers 503 (a load
// balancer's check takes the replica out of rotation), /metrics and /status say so, new requests
// are refused, and the running stream still ends properly.
TEST(HttpApi, HealthIs503WhileDraining) {
  using baton::testing::kPromptWait;
  using baton::testing::wait_until;
  FixtureOptions o;
  o.engine.sleep_us_per_step = 20000;
  o.sched.shutdown_grace_s = 600;  // the stream always finishes inside it
  ServerHarness h(o);
  RawSocket stream(h.port());
  stream.post("/v1/completions",
              R"({"prompt":"abc","max_tokens":40,"ignore_eos":true,"stream":true})");
  ASSERT_TRUE(stream.read_until("data: ", static_cast<int>(kPromptWait.count())));
  auto c = h.client();
  ASSERT_EQ(c->Get("/health")->status, 200);
  std::thread stopper([&] { h.loop().shutdown(); });
  const bool draining = wait_until([&] {
    auto r = c->Get("/health");
    return r && r->status == 503;
  });
  auto health = c->Get("/health");
  auto metrics = c->Get("/metrics");
  auto status = c->Get("/status");
  auto refused = post(*c, "/v1/completions", {{"prompt", "abc"}, {"max_tokens", 3}});
  stopper.join();
  ASSERT_TRUE(draining) << "/health never said the server was draining";
  ASSERT_TRUE(health && metrics && status && refused);
  EXPECT_EQ(parse(health->body)["error"]["code"], "shutting_down") << health->body;
  EXPECT_EQ(health->get_header_value("Retry-After"), "5");
  EXPECT_NE(metrics->body.find("baton_draining 1"), std::string::npos);
  EXPECT_EQ(parse(status->body)["draining"], true);
  EXPECT_EQ(refused->status, 503);
  ASSERT_TRUE(stream.read_until("data: [DONE]", static_cast<int>(kPromptWait.count())));
  EXPECT_NE(stream.received().find("\"finish_reason\":\"length\""), std::string::npos);
}

TEST(HttpApi, ModelsListsTheAlias) {
  ServerHarness h;
  auto r = h.client()->Get("/v1/models");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  auto j = parse(r->body);
  EXPECT_EQ(j["object"], "list");
  ASSERT_EQ(j["data"].size(), 1u);
  EXPECT_EQ(j["data"][0]["id"], "fake-model");
  EXPECT_EQ(j["data"][0]["object"], "model");
}

TEST(HttpApi, ChatCompletionMatchesTheModel) {
  ServerHarness h;
  auto c = h.client();
  auto r = post(*c, "/v1/chat/completions",
                {{"model", "fake-model"},
                 {"messages", {{{"role", "user"}, {"content", "Hello"}}}},
                 {"max_tokens", 12},
                 {"temperature", 0}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = parse(r->body);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(j["model"], "fake-model");
  EXPECT_TRUE(j["created"].is_number_integer());
  const auto& ch = j["choices"][0];
  EXPECT_EQ(ch["index"], 0);
  EXPECT_EQ(ch["message"]["role"], "assistant");
  std::string expected = h.expected_text(plain_prompt("Hello"), 12);
  EXPECT_EQ(ch["message"]["content"], expected);
  EXPECT_EQ(ch["finish_reason"], expected.size() == 12 ? "length" : "stop");
  EXPECT_TRUE(ch["logprobs"].is_null());
  EXPECT_EQ(j["usage"]["prompt_tokens"], plain_prompt("Hello").size());
  EXPECT_EQ(j["usage"]["completion_tokens"], expected.size());
  EXPECT_EQ(j["usage"]["total_tokens"], plain_prompt("Hello").size() + expected.size());
  EXPECT_TRUE(j["usage"]["prompt_tokens_details"]["cached_tokens"].is_number());
}

TEST(HttpApi, CompletionWithTokenPromptAndLogprobs) {
  ServerHarness h;
  auto c = h.client();
  std::vector<int32_t> prompt = {5, 6, 7, 8};
  auto r = post(*c, "/v1/completions",
                {{"prompt", prompt},
                 {"max_tokens", 6},
                 {"temperature", 0},
                 {"ignore_eos", true},
                 {"logprobs", 2}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = parse(r->body);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["id"].get<std::string>().rfind("cmpl-", 0), 0u);
  auto ref = h.engine().reference(prompt, 6, true);
  EXPECT_EQ(j["choices"][0]["text"], h.codec().decode(ref));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  const auto& lp = j["choices"][0]["logprobs"];
  ASSERT_EQ(lp["tokens"].size(), 6u);
  EXPECT_EQ(lp["token_logprobs"].size(), 6u);
  EXPECT_EQ(lp["top_logprobs"].size(), 6u);
  EXPECT_EQ(j["usage"]["prompt_tokens"], 4);
  EXPECT_EQ(j["usage"]["completion_tokens"], 6);
}

TEST(HttpApi, RepeatedPromptReportsCachedTokens) {
  ServerHarness h;
  auto c = h.client();
  json body = {{"prompt", std::string(100, 'a')}, {"max_tokens", 2}, {"ignore_eos", true}};
  ASSERT_EQ(post(*c, "/v1/completions", body)->status, 200);
  auto r = post(*c, "/v1/completions", body);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_GT(parse(r->body)["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(), 0)
      << r->body;
}

TEST(HttpApi, ChatStreamFraming) {
  ServerHarness h;
  auto c = h.client();
  auto r = post(*c, "/v1/chat/completions",
                {{"messages", {{{"role", "user"}, {"content", "Hello"}}}},
                 {"max_tokens", 10},
                 {"temperature", 0},
                 {"stream", true},
                 {"stream_options", {{"include_usage", true}}}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type").rfind("text/event-stream", 0), 0u);
  auto events = sse_events(r->body);
  ASSERT_GE(events.size(), 4u);
  for (const auto& e : events) EXPECT_EQ(e.rfind("data: ", 0), 0u) << e;
  EXPECT_EQ(events.back(), "data: [DONE]");
  EXPECT_EQ(r->body.substr(r->body.size() - 2), "\n\n");
  auto chunks = sse_json(r->body);
  EXPECT_EQ(chunks.front()["choices"][0]["delta"]["role"], "assistant");
  std::string text, finish;
  std::string id = chunks.front()["id"];
  for (size_t i = 0; i + 1 < chunks.size(); ++i) {
    EXPECT_EQ(chunks[i]["object"], "chat.completion.chunk");
    EXPECT_EQ(chunks[i]["id"], id);
    const auto& ch = chunks[i]["choices"][0];
    if (ch["delta"].contains("content")) text += ch["delta"]["content"].get<std::string>();
    if (!ch["finish_reason"].is_null()) finish = ch["finish_reason"];
  }
  std::string expected = h.expected_text(plain_prompt("Hello"), 10);
  EXPECT_EQ(text, expected);
  EXPECT_EQ(finish, expected.size() == 10 ? "length" : "stop");
  const auto& usage_chunk = chunks.back();
  EXPECT_TRUE(usage_chunk["choices"].empty());
  EXPECT_EQ(usage_chunk["usage"]["completion_tokens"], expected.size());
}

TEST(HttpApi, StopStringCutsStreamedAndPlainAnswers) {
  ServerHarness h;
  auto c = h.client();
  std::vector<int32_t> prompt = {9, 10, 11};
  std::string full = h.codec().decode(h.engine().reference(prompt, 30, true));
  std::string stop = full.substr(8, 2);
  std::string expected = full.substr(0, full.find(stop));
  json body = {{"prompt", prompt}, {"max_tokens", 30}, {"ignore_eos", true}, {"stop", stop}};
  auto r = post(*c, "/v1/completions", body);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(parse(r->body)["choices"][0]["text"], expected);
  EXPECT_EQ(parse(r->body)["choices"][0]["finish_reason"], "stop");
  body["stream"] = true;
  r = post(*c, "/v1/completions", body);
  ASSERT_TRUE(r);
  std::string text, finish;
  for (const auto& ch : sse_json(r->body)) {
    EXPECT_EQ(ch["object"], "text_completion");
    text += ch["choices"][0]["text"].get<std::string>();
    if (!ch["choices"][0]["finish_reason"].is_null()) finish = ch["choices"][0]["finish_reason"];
  }
  EXPECT_EQ(text, expected);
  EXPECT_EQ(finish, "stop");
  EXPECT_TRUE(h.wait_idle());
}

TEST(HttpApi, ChatLogprobs) {
  ServerHarness h;
  auto r = post(*h.client(), "/v1/chat/completions",
                {{"messages", {{{"role", "user"}, {"content", "Hi"}}}},
                 {"max_tokens", 5},
                 {"ignore_eos", true},
                 {"logprobs", true},
                 {"top_logprobs", 2}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto j = parse(r->body);
  const auto& content = j["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), 5u) << r->body;
  std::string joined;
  for (const auto& t : content) {
    joined += t["token"].get<std::string>();
    EXPECT_LE(t["logprob"].get<double>(), 0.0);
    EXPECT_EQ(t["top_logprobs"].size(), 2u);
    EXPECT_TRUE(t["bytes"].is_array());
  }
  EXPECT_EQ(joined, j["choices"][0]["message"]["content"]);
}

TEST(HttpApi, ChatMlFormatWhenTheVocabularyHasImStart) {
  FixtureOptions o;
  o.chatml = true;
  ServerHarness h(o);
  auto r = post(
      *h.client(), "/v1/chat/completions",
      {{"messages", {{{"role", "system"}, {"content", "S"}}, {{"role", "user"}, {"content", "U"}}}},
       {"max_tokens", 1}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const std::string chatml =
      "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n";
  EXPECT_EQ(parse(r->body)["usage"]["prompt_tokens"], chatml.size());
}

TEST(HttpApi, TokenizeAndDetokenize) {
  ServerHarness h;
  auto c = h.client();
  auto r = post(*c, "/tokenize", {{"content", "AB"}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(parse(r->body)["tokens"], json({65, 66}));
  r = post(*c, "/tokenize", {{"content", "A"}, {"with_pieces", true}});
  ASSERT_TRUE(r);
  EXPECT_EQ(parse(r->body)["tokens"][0]["id"], 65);
  EXPECT_EQ(parse(r->body)["tokens"][0]["piece"], std::string(1, fake_char(65)));
  r = post(*c, "/detokenize", {{"tokens", {65, 66}}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  EXPECT_EQ(parse(r->body)["content"], h.codec().decode({65, 66}));
}

TEST(HttpApi, MetricsAndStatus) {
  ServerHarness h;
  auto c = h.client();
  ASSERT_EQ(post(*c, "/v1/completions", {{"prompt", "abc"}, {"max_tokens", 3}})->status, 200);
  auto m = c->Get("/metrics");
  ASSERT_TRUE(m);
  ASSERT_EQ(m->status, 200);
  EXPECT_EQ(m->get_header_value("Content-Type").rfind("text/plain", 0), 0u);
  EXPECT_NE(m->body.find("baton_requests_total{status=\"ok\"} 1"), std::string::npos) << m->body;
  EXPECT_NE(m->body.find("# TYPE baton_e2e_request_latency_seconds histogram"), std::string::npos);
  EXPECT_NE(m->body.find("baton_e2e_request_latency_seconds_count 1"), std::string::npos);
  EXPECT_NE(m->body.find("baton_http_responses_total{code=\"200\"}"), std::string::npos);
  // The answer is written before the loop retires the request and frees its blocks, so the
  // status may show them for a moment.
  json j;
  for (int tries = 0; tries < 500; ++tries) {
    auto s = c->Get("/status");
    ASSERT_TRUE(s);
    ASSERT_EQ(s->status, 200);
    j = parse(s->body);
    if (j["kv"]["blocks_used"] == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(j["config"]["parallel"], 1);
  EXPECT_TRUE(j["running"].is_array());
  EXPECT_TRUE(j["waiting"].is_array());
  EXPECT_EQ(j["kv"]["blocks_used"], 0);
  EXPECT_EQ(j["totals"]["requests"]["ok"], 1);
}

// The session a request names (headers first, then prompt_cache_key) is counted in /status and
// /metrics: a session's second request here is returning and finds its prefix cached.
TEST(HttpApi, SessionFiguresFromHeadersAndPromptCacheKey) {
  ServerHarness h;
  auto c = h.client();
  const std::string prompt(200, 'a');  // many KV blocks, so a repeat finds a cached prefix
  const json body = {{"prompt", prompt}, {"max_tokens", 2}};
  ASSERT_EQ(post(*c, "/v1/completions", body, {{"x-session-affinity", "conv-1"}})->status, 200);
  ASSERT_EQ(post(*c, "/v1/completions", body, {{"X-Session-Affinity", "conv-1"}})->status, 200);
  json keyed = {{"messages", {{{"role", "user"}, {"content", "hi"}}}},
                {"max_tokens", 2},
                {"prompt_cache_key", "conv-2"}};
  ASSERT_EQ(post(*c, "/v1/chat/completions", keyed)->status, 200);
  // The header wins over the body: this is conv-3's first request, not conv-2's second.
  ASSERT_EQ(
      post(*c, "/v1/chat/completions", keyed, {{"x-claude-code-session-id", "conv-3"}})->status,
      200);
  ASSERT_EQ(post(*c, "/v1/completions", body)->status, 200);  // names no session
  json j;
  for (int tries = 0; tries < 500; ++tries) {
    j = parse(c->Get("/status")->body);
    if (j["totals"]["requests"]["ok"] == 5) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const json& s = j["sessions"];
  EXPECT_EQ(s["tracked"], 3);
  EXPECT_EQ(s["new"]["requests"], 3);
  EXPECT_EQ(s["returning"]["requests"], 1);
  EXPECT_GT(s["returning"]["cached_tokens"].get<int>(), 150) << s.dump();
  ASSERT_EQ(s["recent"].size(), 3u);
  EXPECT_EQ(s["recent"][0]["id"], "conv-3");
  EXPECT_EQ(s["recent"][1]["id"], "conv-2");
  EXPECT_EQ(s["recent"][2]["id"], "conv-1");
  EXPECT_EQ(s["recent"][2]["requests"], 2);
  const std::string m = c->Get("/metrics")->body;
  EXPECT_NE(m.find("baton_session_requests_total{session=\"new\"} 3"), std::string::npos) << m;
  EXPECT_NE(m.find("baton_session_requests_total{session=\"returning\"} 1"), std::string::npos);
  EXPECT_NE(m.find("baton_sessions 3"), std::string::npos);
}

TEST(HttpApi, SessionKeysAreCleanedAndBounded) {
  EXPECT_EQ(clean_session_key("  ab c\x01\xff d  "), "abcd");
  EXPECT_EQ(clean_session_key(std::string(500, 'x')).size(), kMaxSessionKey);
  EXPECT_EQ(clean_session_key(" \t "), "");
}

}  // namespace
}  // namespace baton::server::testing
