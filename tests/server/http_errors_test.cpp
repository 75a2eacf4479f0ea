// Every way a request can be refused: status, OpenAI error body, and the server stays healthy.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "server_fixture.h"
#include "sse_client.h"
#include "support/time_budget.h"

namespace baton::server::testing {
namespace {

using baton::testing::kPromptWait;
using baton::testing::wait_until;
using nlohmann::json;

const std::string kMsgs = R"("messages":[{"role":"user","content":"hi"}])";

struct BadCase {
  const char* name;
  const char* path;
  std::string body;
  const char* param;  // expected error.param, "" = not checked
};

std::string chat(const std::string& extra) {
  return "{" + kMsgs + "," + extra + "}";
}

std::vector<BadCase> bad_cases() {
  return {
      {"malformed json", kChat, "{not json", ""},
      {"body not an object", kChat, "[1,2]", ""},
      {"messages missing", kChat, "{}", "messages"},
      {"messages not array", kChat, R"({"messages":"hi"})", "messages"},
      {"messages empty", kChat, R"({"messages":[]})", "messages"},
      {"message not object", kChat, R"({"messages":[1]})", "messages[0]"},
      {"role missing", kChat, R"({"messages":[{"content":"x"}]})", "messages[0].role"},
      {"role unknown", kChat, R"({"messages":[{"role":"robot","content":"x"}]})",
       "messages[0].role"},
      {"content wrong type", kChat, R"({"messages":[{"role":"user","content":5}]})",
       "messages[0].content"},
      {"image part", kChat,
       R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":{}}]}]})",
       "messages[0].content"},
      {"temperature too high", kChat, chat(R"("temperature":3)"), "temperature"},
      {"temperature not number", kChat, chat(R"("temperature":"hot")"), "temperature"},
      {"top_p over 1", kChat, chat(R"("top_p":1.5)"), "top_p"},
      {"top_k negative", kChat, chat(R"("top_k":-1)"), "top_k"},
      {"min_p over 1", kChat, chat(R"("min_p":2)"), "min_p"},
      {"presence_penalty range", kChat, chat(R"("presence_penalty":5)"), "presence_penalty"},
      {"frequency_penalty range", kChat, chat(R"("frequency_penalty":-3)"), "frequency_penalty"},
      {"repetition_penalty zero", kChat, chat(R"("repetition_penalty":0)"), "repetition_penalty"},
      {"max_tokens zero", kChat, chat(R"("max_tokens":0)"), "max_tokens"},
      {"max_tokens over limit", kChat, chat(R"("max_tokens":100000)"), "max_tokens"},
      {"max_tokens fractional", kChat, chat(R"("max_tokens":1.5)"), "max_tokens"},
      {"max_completion_tokens negative", kChat, chat(R"("max_completion_tokens":-4)"),
       "max_completion_tokens"},
      {"n is 65", kChat, chat(R"("n":65)"), "n"},
      {"five stops", kChat, chat(R"("stop":["a","b","c","d","e"])"), "stop"},
      {"stop number", kChat, chat(R"("stop":7)"), "stop"},
      {"stop empty string", kChat, chat(R"("stop":[""])"), "stop"},
      {"tools not array", kChat, chat(R"("tools":{"name":"f"})"), "tools"},
      {"tool type", kChat, chat(R"("tools":[{"type":"web_search"}])"), "tools[0].type"},
      {"tool without name", kChat, chat(R"("tools":[{"type":"function","function":{}}])"),
       "tools[0].function.name"},
      {"tool name with spaces", kChat,
       chat(R"("tools":[{"type":"function","function":{"name":"a b"}}])"),
       "tools[0].function.name"},
      {"two tools one name", kChat,
       chat(R"("tools":[{"type":"function","function":{"name":"f"}},)"
            R"({"type":"function","function":{"name":"f"}}])"),
       "tools[1].function.name"},
      {"tool parameters not object", kChat,
       chat(R"("tools":[{"type":"function","function":{"name":"f","parameters":[]}}])"),
       "tools[0].function.parameters"},
      {"tool_choice unknown", kChat, chat(R"("tool_choice":"always")"), "tool_choice"},
      {"tool_choice required without tools", kChat, chat(R"("tool_choice":"required")"),
       "tool_choice"},
      {"tool_choice names a missing tool", kChat,
       chat(R"("tools":[{"type":"function","function":{"name":"f"}}],)"
            R"("tool_choice":{"type":"function","function":{"name":"g"}})"),
       "tool_choice"},
      {"history arguments not JSON", kChat,
       R"({"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"1",)"
       R"("type":"function","function":{"name":"f","arguments":"{oops"}}]}]})",
       "messages[0].tool_calls[0].function.arguments"},
      {"parallel_tool_calls string", kChat, chat(R"("parallel_tool_calls":"yes")"),
       "parallel_tool_calls"},
      {"chat_template_kwargs array", kChat, chat(R"("chat_template_kwargs":[])"),
       "chat_template_kwargs"},
      {"unknown model", kChat, chat(R"("model":"gpt-4")"), "model"},
      {"top_logprobs without logprobs", kChat, chat(R"("top_logprobs":3)"), "top_logprobs"},
      {"top_logprobs too many", kChat, chat(R"("logprobs":true,"top_logprobs":50)"),
       "top_logprobs"},
      {"stream not bool", kChat, chat(R"("stream":"yes")"), "stream"},
      {"stream_options without stream", kChat, chat(R"("stream_options":{"include_usage":true})"),
       "stream_options"},
      {"seed string", kChat, chat(R"("seed":"x")"), "seed"},
      {"user number", kChat, chat(R"("user":5)"), "user"},
      {"response_format xml", kChat, chat(R"("response_format":{"type":"xml"})"),
       "response_format"},
      {"deep nesting", kChat, std::string(5000, '[') + std::string(5000, ']'), ""},
      {"prompt missing", kText, "{}", "prompt"},
      {"prompt number", kText, R"({"prompt":5})", "prompt"},
      {"prompt empty tokens", kText, R"({"prompt":[]})", "prompt"},
      {"prompt negative token", kText, R"({"prompt":[-1]})", "prompt"},
      {"prompt token past vocab", kText, R"({"prompt":[999]})", "prompt"},
      {"prompt list with a number", kText, R"({"prompt":["a",5]})", "prompt"},
      {"echo with logprobs", kText, R"({"prompt":"a","echo":true,"logprobs":1})", "logprobs"},
      {"n zero", kText, R"({"prompt":"a","n":0})", "n"},
      {"too many choices", kText, R"({"prompt":["a","b","c"],"n":30})", "n"},
      {"best_of below n", kText, R"({"prompt":"a","n":2,"best_of":1})", "best_of"},
      {"completion logprobs range", kText, R"({"prompt":"a","logprobs":50})", "logprobs"},
      {"over the context", kText, R"({"prompt":"hello","max_tokens":4096})", "max_tokens"},
      {"ignore_eos not bool", kText, R"({"prompt":"a","ignore_eos":"no"})", "ignore_eos"},
      {"tokenize without content", "/tokenize", "{}", "content"},
      {"detokenize bad tokens", "/detokenize", R"({"tokens":"x"})", "tokens"},
      {"detokenize token past vocab", "/detokenize", R"({"tokens":[1000]})", "tokens"},
  };
}

TEST(HttpErrors, BadRequestTable) {
  ServerHarness h;
  auto c = h.client();
  auto cases = bad_cases();
  ASSERT_GE(cases.size(), 25u);
  for (const auto& bc : cases) {
    SCOPED_TRACE(bc.name);
    auto r = c->Post(bc.path, bc.body, "application/json");
    ASSERT_TRUE(r) << bc.name;
    EXPECT_EQ(r->status, 400) << bc.name << ": " << r->body;
    expect_error_shape(r->body, bc.name);
    auto j = parse(r->body);
    EXPECT_EQ(j["error"]["type"], "invalid_request_error") << bc.name;
    if (*bc.param) {
      EXPECT_EQ(j["error"]["param"], bc.param) << bc.name << ": " << r->body;
    }
    auto health = c->Get("/health");
    ASSERT_TRUE(health) << bc.name;
    EXPECT_EQ(health->status, 200) << bc.name;
  }
  // The context error names the numbers.
  auto r = c->Post(kText, R"({"prompt":"hello","max_tokens":4096})", "application/json");
  ASSERT_TRUE(r);
  std::string msg = parse(r->body)["error"]["message"];
  EXPECT_NE(msg.find("4096"), std::string::npos) << msg;
  EXPECT_NE(msg.find("5 tokens"), std::string::npos) << msg;
  EXPECT_TRUE(h.wait_idle());
}

TEST(HttpErrors, ApiKey) {
  FixtureOptions o;
  o.server.api_key = "sekrit";
  ServerHarness h(o);
  auto c = h.client();
  auto r = c->Get("/v1/models");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  expect_error_shape(r->body, "no key");
  EXPECT_EQ(parse(r->body)["error"]["type"], "authentication_error");
  httplib::Headers wrong = {{"Authorization", "Bearer nope"}};
  EXPECT_EQ(c->Get("/v1/models", wrong)->status, 401);
  EXPECT_EQ(c->Get("/metrics")->status, 401);
  EXPECT_EQ(c->Get("/status")->status, 401);
  EXPECT_EQ(c->Get("/health")->status, 200);
  httplib::Headers good = {{"Authorization", "Bearer sekrit"}};
  EXPECT_EQ(c->Get("/v1/models", good)->status, 200);
  EXPECT_EQ(c->Get("/metrics", {{"x-api-key", "sekrit"}})->status, 200);
  c->set_bearer_token_auth("sekrit");
  auto ok = c->Post(kText, R"({"prompt":"a","max_tokens":1})", "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

TEST(HttpErrors, UnknownPathAndWrongMethod) {
  ServerHarness h;
  auto c = h.client();
  auto r = c->Get("/v1/nope");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  expect_error_shape(r->body, "404");
  r = c->Get(kChat);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->get_header_value("Allow"), "POST");
  expect_error_shape(r->body, "405");
  r = c->Post("/v1/models", "{}", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(c->Get("/health")->status, 200);
}

TEST(HttpErrors, BodyOverTheLimitIs413) {
  FixtureOptions o;
  o.server.max_body_mb = 1;
  ServerHarness h(o);
  auto c = h.client();
  std::string big = R"({"prompt":")" + std::string(1 << 21, 'a') + R"("})";
  auto r = c->Post(kText, big, "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 413);
  expect_error_shape(r->body, "413");
  EXPECT_EQ(h.client()->Get("/health")->status, 200);
}

// One slot, one place in the queue, and steps slow enough that a stream holds them.
FixtureOptions one_slot_one_queue_place() {
  FixtureOptions o;
  o.sched.parallel = 1;
  o.sched.max_queue = 1;
  o.engine.sleep_us_per_step = 2000;
  return o;
}

// One request more than the server holds (a stream running and one waiting fill it), then the
// streams are let go; the extra request's response.
httplib::Result request_over_a_full_queue(ServerHarness& h) {
  RawSocket a(h.port()), b(h.port());
  const std::string slow = R"({"prompt":"a","max_tokens":2000,"ignore_eos":true,"stream":true})";
  a.post(kText, slow);
  EXPECT_TRUE(a.read_until("data: {", static_cast<int>(kPromptWait.count())));
  b.post(kText, slow);
  EXPECT_TRUE(wait_until([&] { return h.loop().status().requests.size() >= 2; }));
  auto r = h.client()->Post(kText, R"({"prompt":"x","max_tokens":1})", "application/json");
  a.close();
  b.close();
  EXPECT_TRUE(h.wait_idle(static_cast<int>(kPromptWait.count())));
  return r;
}

// Once requests have finished, Retry-After is how long one ran (per slot): here at least the
// 1.2 s the fake engine slept through the finished request's 600 steps.
TEST(HttpErrors, FullQueueRetryAfterFollowsHowLongRequestsRun) {
  ServerHarness h(one_slot_one_queue_place());
  auto done = h.client()->Post(kText, R"({"prompt":"a","max_tokens":600,"ignore_eos":true})",
                               "application/json");
  ASSERT_TRUE(done);
  ASSERT_EQ(done->status, 200);
  ASSERT_TRUE(wait_until([&] { return h.loop().metrics().e2e_latency.count == 1; }));
  auto r = request_over_a_full_queue(h);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  const std::string after = r->get_header_value("Retry-After");
  ASSERT_FALSE(after.empty());
  EXPECT_GE(std::stoi(after), 2);
  EXPECT_LE(std::stoi(after), 60);
}

TEST(HttpErrors, FullQueueIs503WithRetryAfter) {
  ServerHarness h(one_slot_one_queue_place());
  auto r = request_over_a_full_queue(h);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  // Nothing has finished yet, so there is no running time to go by: one second.
  EXPECT_EQ(r->get_header_value("Retry-After"), "1");
  expect_error_shape(r->body, "queue full");
  EXPECT_EQ(h.client()->Get("/health")->status, 200);
}

TEST(HttpErrors, EngineFailureIs500AndServerStaysUp) {
  ServerHarness h;
  std::atomic<bool> fail{true};
  h.engine().set_on_step([&](const engine::StepBatch&) {
    if (fail.exchange(false)) throw std::runtime_error("injected fault");
  });
  auto c = h.client();
  auto r = c->Post(kText, R"({"prompt":"abc","max_tokens":3})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 500) << r->body;
  expect_error_shape(r->body, "engine failure");
  EXPECT_EQ(parse(r->body)["error"]["type"], "server_error");
  r = c->Post(kText, R"({"prompt":"abc","max_tokens":3})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_TRUE(h.wait_idle());
}

}  // namespace
}  // namespace baton::server::testing

namespace baton::server::testing {
namespace {

TEST(HttpErrors, EngineFailureMidStreamSendsAnErrorEvent) {
  ServerHarness h;
  std::atomic<int> steps{0};
  h.engine().set_on_step([&](const engine::StepBatch&) {
    if (++steps == 4) throw std::runtime_error("injected fault");
  });
  auto r =
      h.client()->Post(kText, R"({"prompt":"abc","max_tokens":50,"ignore_eos":true,"stream":true})",
                       "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  auto chunks = sse_json(r->body);
  ASSERT_FALSE(chunks.empty());
  expect_error_shape(chunks.back().dump(), "stream error event");
  EXPECT_EQ(sse_events(r->body).back(), "data: [DONE]");
  EXPECT_TRUE(h.wait_idle());
  EXPECT_EQ(h.client()->Get("/health")->status, 200);
}

TEST(HttpErrors, OversizedHeaderIsRefusedWithoutHarm) {
  ServerHarness h;
  RawSocket s(h.port());
  s.send_all("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(64 * 1024, 'a') +
             "\r\n\r\n");
  s.read_until("\r\n\r\n", 3000);
  if (!s.received().empty()) {
    EXPECT_EQ(s.received().rfind("HTTP/1.1 4", 0), 0u) << s.received();
  }
  auto r = h.client()->Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST(HttpErrors, EndlessHeadersAreCutOff) {
  ServerHarness h;
  RawSocket s(h.port());
  std::string headers = "GET /health HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 200; ++i)
    headers += "X-H" + std::to_string(i) + ": " + std::string(1000, 'a') + "\r\n";
  s.send_all(headers + "\r\n");
  s.read_until("\r\n\r\n", 3000);
  EXPECT_EQ(s.received().find("HTTP/1.1 200"), std::string::npos) << s.received();
  auto r = h.client()->Get("/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
}

TEST(HttpErrors, ShutdownAnswers503) {
  FixtureOptions o;
  o.engine.sleep_us_per_step = 2000;
  o.sched.shutdown_grace_s = 0;
  ServerHarness h(o);
  // The shutdown comes while the request runs (3000 steps of 2 ms).
  std::atomic<bool> was_running{false};
  std::thread t([&] {
    was_running = wait_until([&] { return !h.loop().status().requests.empty(); });
    h.loop().shutdown();
  });
  auto r = h.client()->Post(kText, R"({"prompt":"a","max_tokens":3000,"ignore_eos":true})",
                            "application/json");
  t.join();
  EXPECT_TRUE(was_running) << "the request never showed in /status before the shutdown";
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503) << r->body;
  EXPECT_TRUE(r->has_header("Retry-After"));
  expect_error_shape(r->body, "shutdown");
  r = h.client()->Post(kText, R"({"prompt":"a","max_tokens":3})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
}

}  // namespace
}  // namespace baton::server::testing
