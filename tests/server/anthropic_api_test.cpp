// Anthropic's Messages API: the writer's events and bodies, and the routes over real sockets
// against the fake engine.
#include <gtest/gtest.h>

#include <map>

#include "server/api/anthropic_writer.h"
#include "server/errors.h"
#include "server_fixture.h"
#include "sse_client.h"

namespace baton::server::testing {
namespace {

using nlohmann::json;

// ---- the writer ----

struct Event {
  std::string name;
  json data;
};

// Anthropic's SSE framing: every event is `event: <type>` then `data: <json>` whose type is the
// same, and a blank line.
std::vector<Event> events_of(const std::string& sse) {
  std::vector<Event> out;
  EXPECT_TRUE(sse.empty() || sse.ends_with("\n\n")) << sse;
  for (const auto& e : sse_events(sse)) {
    if (e.empty()) continue;
    auto nl = e.find('\n');
    EXPECT_EQ(e.rfind("event: ", 0), 0u) << e;
    EXPECT_NE(nl, std::string::npos) << e;
    if (nl == std::string::npos) continue;
    EXPECT_EQ(e.compare(nl + 1, 6, "data: "), 0) << e;
    Event ev{e.substr(7, nl - 7), json::parse(e.substr(nl + 7), nullptr, false)};
    EXPECT_EQ(ev.data["type"], ev.name) << e;
    out.push_back(std::move(ev));
  }
  return out;
}

std::vector<std::string> names(const std::vector<Event>& evs) {
  std::vector<std::string> out;
  for (const auto& e : evs) out.push_back(e.name);
  return out;
}

AnthropicWriter writer() {
  return AnthropicWriter(AnthropicAnswer{"msg_test", "claude-x"});
}

toolcall::OutputDelta text_delta(const std::string& s) {
  toolcall::OutputDelta d;
  d.content = s;
  return d;
}

toolcall::ParsedOutput parsed(const std::string& reasoning, const std::string& content,
                              std::vector<toolcall::ToolCall> calls = {}) {
  toolcall::ParsedOutput p;
  p.reasoning = reasoning;
  p.content = content;
  p.calls = std::move(calls);
  return p;
}

ChoiceResult result(const std::string& reason, toolcall::ParsedOutput msg = {}) {
  ChoiceResult r;
  r.engine_reason = reason;
  r.msg = std::move(msg);
  return r;
}

TEST(AnthropicWriter, TextStream) {
  auto w = writer();
  std::string sse = w.stream_start();
  sse += w.stream_delta(0, text_delta("Hel"), {});
  sse += w.stream_delta(0, text_delta("lo"), {});
  Usage u{10, 2, 4};
  sse += w.stream_end({result("stop", parsed("", "Hello"))}, u);
  auto evs = events_of(sse);
  ASSERT_EQ(names(evs),
            (std::vector<std::string>{"message_start", "content_block_start", "content_block_delta",
                                      "content_block_delta", "content_block_stop", "message_delta",
                                      "message_stop"}));
  const json& msg = evs[0].data["message"];
  EXPECT_EQ(msg["id"], "msg_test");
  EXPECT_EQ(msg["type"], "message");
  EXPECT_EQ(msg["role"], "assistant");
  EXPECT_EQ(msg["model"], "claude-x");
  EXPECT_EQ(msg["content"], json::array());
  EXPECT_TRUE(msg["stop_reason"].is_null());
  EXPECT_TRUE(msg["stop_sequence"].is_null());
  for (const char* k : {"input_tokens", "output_tokens", "cache_read_input_tokens",
                        "cache_creation_input_tokens"}) {
    EXPECT_TRUE(msg["usage"][k].is_number_integer()) << k;
  }
  EXPECT_EQ(evs[1].data["index"], 0);
  EXPECT_EQ(evs[1].data["content_block"], json({{"type", "text"}, {"text", ""}}));
  EXPECT_EQ(evs[2].data["index"], 0);
  EXPECT_EQ(evs[2].data["delta"], json({{"type", "text_delta"}, {"text", "Hel"}}));
  EXPECT_EQ(evs[3].data["delta"]["text"], "lo");
  EXPECT_EQ(evs[4].data, json({{"type", "content_block_stop"}, {"index", 0}}));
  EXPECT_EQ(evs[5].data["delta"], json({{"stop_reason", "end_turn"}, {"stop_sequence", nullptr}}));
  // Prompt tokens found in the prefix cache are cache reads; the sum is the prompt.
  EXPECT_EQ(evs[5].data["usage"], json({{"input_tokens", 6},
                                        {"cache_read_input_tokens", 4},
                                        {"cache_creation_input_tokens", 0},
                                        {"output_tokens", 2}}));
  EXPECT_EQ(evs[6].data, json({{"type", "message_stop"}}));
}

TEST(AnthropicWriter, ToolUseStream) {
  auto w = writer();
  std::string sse = w.stream_start();
  sse += w.stream_delta(0, text_delta("Let me look."), {});
  sse += w.stream_delta(0, text_delta("\n\n"), {});
  toolcall::OutputDelta d;
  d.calls = {{0, "call_a", "weather", R"({"city": )"}};
  sse += w.stream_delta(0, d, {});
  d.calls = {{0, "", "", R"("Paris"})"}, {1, "call_b", "time", ""}};
  sse += w.stream_delta(0, d, {});
  d.calls = {{1, "", "", "{}"}};
  sse += w.stream_delta(0, d, {});
  auto msg = parsed("", "Let me look.\n\n",
                    {{"call_a", "weather", R"({"city": "Paris"})"}, {"call_b", "time", "{}"}});
  sse += w.stream_end({result("stop", msg)}, Usage{});
  auto evs = events_of(sse);
  std::vector<std::string> blocks;
  std::map<int, std::string> partial;
  std::string text;
  int open = -1;
  for (const auto& e : evs) {
    if (e.name == "content_block_start") {
      EXPECT_EQ(open, -1) << "a block opened before the last one stopped";
      open = e.data["index"].get<int>();
      EXPECT_EQ(open, static_cast<int>(blocks.size()));
      blocks.push_back(e.data["content_block"]["type"].get<std::string>());
      if (blocks.back() == "tool_use") {
        EXPECT_EQ(e.data["content_block"]["input"], json::object());
        EXPECT_EQ(e.data["content_block"]["id"], open == 1 ? "call_a" : "call_b");
        EXPECT_EQ(e.data["content_block"]["name"], open == 1 ? "weather" : "time");
      }
    } else if (e.name == "content_block_delta") {
      EXPECT_EQ(e.data["index"], open);
      if (e.data["delta"]["type"] == "input_json_delta") {
        partial[open] += e.data["delta"]["partial_json"].get<std::string>();
      } else {
        EXPECT_EQ(e.data["delta"]["type"], "text_delta");
        text += e.data["delta"]["text"].get<std::string>();
      }
    } else if (e.name == "content_block_stop") {
      EXPECT_EQ(e.data["index"], open);
      open = -1;
    }
  }
  EXPECT_EQ(blocks, (std::vector<std::string>{"text", "tool_use", "tool_use"}));
  EXPECT_EQ(partial[1], R"({"city": "Paris"})");
  EXPECT_EQ(partial[2], "{}");
  EXPECT_EQ(text, "Let me look.\n\n");
  EXPECT_EQ(evs[evs.size() - 2].data["delta"]["stop_reason"], "tool_use");
}

// Blank lines between thinking and a call open no text block (clients would show an empty
// paragraph); once text has begun they are part of it.
TEST(AnthropicWriter, BlankLinesBeforeACallOpenNoTextBlock) {
  auto w = writer();
  toolcall::OutputDelta d;
  d.reasoning = "Need the weather.";
  std::string sse = w.stream_start();  // one call per statement: the events' order matters
  sse += w.stream_delta(0, d, {});
  sse += w.stream_delta(0, text_delta("\n"), {});
  sse += w.stream_delta(0, text_delta("\n"), {});
  d = {};
  d.calls = {{0, "call_a", "weather", "{}"}};
  sse += w.stream_delta(0, d, {});
  sse += w.stream_end(
      {result("stop", parsed("Need the weather.", "\n\n", {{"call_a", "weather", "{}"}}))},
      Usage{});
  std::vector<std::string> blocks;
  for (const auto& e : events_of(sse)) {
    if (e.name == "content_block_start") {
      blocks.push_back(e.data["content_block"]["type"].get<std::string>());
    }
  }
  EXPECT_EQ(blocks, (std::vector<std::string>{"thinking", "tool_use"}));
  // Held blank lines go out with the text that follows them.
  auto w2 = writer();
  sse = w2.stream_start();
  sse += w2.stream_delta(0, text_delta("\n"), {});
  sse += w2.stream_delta(0, text_delta("Hi"), {});
  auto evs = events_of(sse);
  ASSERT_EQ(evs.size(), 3u);
  EXPECT_EQ(evs[2].data["delta"]["text"], "\nHi");
}

TEST(AnthropicWriter, ThinkingStream) {
  auto w = writer();
  std::string sse = w.stream_start();
  toolcall::OutputDelta d;
  d.reasoning = "Hmm";
  sse += w.stream_delta(0, d, {});
  d.reasoning = ", yes.";
  d.content = "Yes.";
  sse += w.stream_delta(0, d, {});
  sse += w.stream_end({result("stop", parsed("Hmm, yes.", "Yes."))}, Usage{});
  auto evs = events_of(sse);
  ASSERT_EQ(names(evs), (std::vector<std::string>{
                            "message_start", "content_block_start", "content_block_delta",
                            "content_block_delta", "content_block_delta", "content_block_stop",
                            "content_block_start", "content_block_delta", "content_block_stop",
                            "message_delta", "message_stop"}));
  EXPECT_EQ(evs[1].data["content_block"]["type"], "thinking");
  EXPECT_EQ(evs[1].data["content_block"]["thinking"], "");
  EXPECT_EQ(evs[2].data["delta"], json({{"type", "thinking_delta"}, {"thinking", "Hmm"}}));
  EXPECT_EQ(evs[3].data["delta"], json({{"type", "thinking_delta"}, {"thinking", ", yes."}}));
  EXPECT_EQ(evs[4].data["delta"]["type"], "signature_delta");
  EXPECT_FALSE(evs[4].data["delta"]["signature"].get<std::string>().empty());
  EXPECT_EQ(evs[5].data["index"], 0);
  EXPECT_EQ(evs[6].data["index"], 1);
  EXPECT_EQ(evs[6].data["content_block"]["type"], "text");
  EXPECT_EQ(evs[7].data["delta"]["text"], "Yes.");
  EXPECT_EQ(evs[8].data["index"], 1);
}

TEST(AnthropicWriter, MaxTokensAndEmptyAnswer) {
  auto w = writer();
  std::string sse = w.stream_start();
  sse += w.stream_end({result("length")}, Usage{3, 7, 0});
  auto evs = events_of(sse);
  ASSERT_EQ(names(evs),
            (std::vector<std::string>{"message_start", "message_delta", "message_stop"}));
  EXPECT_EQ(evs[1].data["delta"]["stop_reason"], "max_tokens");
  EXPECT_EQ(evs[1].data["usage"]["output_tokens"], 7);
  EXPECT_EQ(evs[1].data["usage"]["input_tokens"], 3);
  // A call cut by max_tokens is still max_tokens.
  auto cut = parsed("", "", {{"c", "f", R"({"a":)"}});
  EXPECT_EQ(anthropic_stop_reason(result("length", cut)), "max_tokens");
  EXPECT_EQ(anthropic_stop_reason(result("stop", cut)), "tool_use");
  EXPECT_EQ(anthropic_stop_reason(result("stop")), "end_turn");
}

TEST(AnthropicWriter, ErrorPingAndErrorBody) {
  auto w = writer();
  ApiError e(503, "the server is shutting down");
  auto evs = events_of(w.stream_error(e));
  ASSERT_EQ(evs.size(), 1u);
  EXPECT_EQ(evs[0].name, "error");
  EXPECT_EQ(evs[0].data,
            json({{"type", "error"},
                  {"error",
                   {{"type", "overloaded_error"}, {"message", "the server is shutting down"}}}}));
  EXPECT_EQ(w.stream_keepalive(), "event: ping\ndata: {\"type\":\"ping\"}\n\n");
  EXPECT_EQ(w.error_body_json(ApiError(500, "boom"))["error"]["type"], "api_error");
  EXPECT_EQ(w.error_body_json(bad_request("bad"))["error"]["type"], "invalid_request_error");
}

TEST(AnthropicWriter, AnswerJson) {
  auto w = writer();
  auto msg = parsed("Think.", "Calling.",
                    {{"call_1", "weather", R"({"city":"Paris"})"}, {"call_2", "f", "oops"}});
  json j = w.answer_json({result("stop", msg)}, Usage{20, 5, 0});
  EXPECT_EQ(j["id"], "msg_test");
  EXPECT_EQ(j["type"], "message");
  EXPECT_EQ(j["role"], "assistant");
  EXPECT_EQ(j["model"], "claude-x");
  EXPECT_EQ(j["stop_reason"], "tool_use");
  EXPECT_TRUE(j["stop_sequence"].is_null());
  ASSERT_EQ(j["content"].size(), 4u) << j.dump();
  EXPECT_EQ(j["content"][0]["type"], "thinking");
  EXPECT_EQ(j["content"][0]["thinking"], "Think.");
  EXPECT_TRUE(j["content"][0]["signature"].is_string());
  EXPECT_EQ(j["content"][1], json({{"type", "text"}, {"text", "Calling."}}));
  EXPECT_EQ(j["content"][2], json({{"type", "tool_use"},
                                   {"id", "call_1"},
                                   {"name", "weather"},
                                   {"input", {{"city", "Paris"}}}}));
  EXPECT_EQ(j["content"][3]["input"], json::object());
  EXPECT_EQ(j["usage"], json({{"input_tokens", 20},
                              {"cache_read_input_tokens", 0},
                              {"cache_creation_input_tokens", 0},
                              {"output_tokens", 5}}));

  j = writer().answer_json({result("length", parsed("", "  \n"))}, Usage{});
  EXPECT_EQ(j["content"], json::array());
  EXPECT_EQ(j["stop_reason"], "max_tokens");
}

// A call's arguments are the model's text: nested past the JSON bound they are no object to
// show (the body, dumped, would otherwise recurse once per level).
TEST(AnthropicWriter, DeepArgumentsGiveAnEmptyInput) {
  const std::string deep = "{\"a\":" + std::string(25000, '[') + std::string(25000, ']') + "}";
  auto msg = parsed("", "", {{"call_1", "f", deep}});
  json j = writer().answer_json({result("stop", msg)}, Usage{});
  ASSERT_EQ(j["content"].size(), 1u) << j.dump().substr(0, 200);
  EXPECT_EQ(j["content"][0]["input"], json::object());
  EXPECT_FALSE(j.dump().empty());
}

// ---- over HTTP ----

httplib::Result post(httplib::Client& c, const std::string& path, const json& body,
                     const httplib::Headers& headers = {}) {
  return c.Post(path.c_str(), headers, body.dump(), "application/json");
}

void expect_anthropic_error(const httplib::Result& r, int status, const std::string& type,
                            const std::string& context) {
  ASSERT_TRUE(r) << context;
  EXPECT_EQ(r->status, status) << context << ": " << r->body;
  json j = parse(r->body);
  EXPECT_EQ(j["type"], "error") << context << ": " << r->body;
  EXPECT_EQ(j["error"]["type"], type) << context << ": " << r->body;
  EXPECT_TRUE(j["error"]["message"].is_string() &&
              !j["error"]["message"].get<std::string>().empty())
      << context;
  EXPECT_FALSE(j.contains("param")) << context;
}

json hello(bool stream) {
  return {{"model", "claude-sonnet-4-5"},
          {"max_tokens", 12},
          {"temperature", 0},
          {"stream", stream},
          {"messages", {{{"role", "user"}, {"content", "Hello"}}}}};
}

TEST(AnthropicApi, MessageMatchesTheModel) {
  ServerHarness h;
  auto r = post(*h.client(), "/v1/messages", hello(false));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = parse(r->body);
  EXPECT_EQ(j["type"], "message");
  EXPECT_EQ(j["role"], "assistant");
  EXPECT_EQ(j["model"], "claude-sonnet-4-5");
  EXPECT_EQ(j["id"].get<std::string>().rfind("msg_", 0), 0u);
  const std::string expected = h.expected_text(plain_prompt("Hello"), 12);
  ASSERT_FALSE(expected.empty());
  ASSERT_EQ(j["content"].size(), 1u) << r->body;
  EXPECT_EQ(j["content"][0], json({{"type", "text"}, {"text", expected}}));
  EXPECT_EQ(j["stop_reason"], expected.size() == 12 ? "max_tokens" : "end_turn");
  EXPECT_TRUE(j["stop_sequence"].is_null());
  const auto& u = j["usage"];
  EXPECT_EQ(u["input_tokens"].get<int>() + u["cache_read_input_tokens"].get<int>(),
            static_cast<int>(plain_prompt("Hello").size()));
  EXPECT_EQ(u["output_tokens"], expected.size());
  EXPECT_TRUE(h.wait_idle());
}

TEST(AnthropicApi, StreamedMessage) {
  ServerHarness h;
  auto r = post(*h.client(), "/v1/messages", hello(true));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("Content-Type").rfind("text/event-stream", 0), 0u);
  auto evs = events_of(r->body);
  ASSERT_GE(evs.size(), 6u) << r->body;
  EXPECT_EQ(evs.front().name, "message_start");
  EXPECT_EQ(evs.front().data["message"]["model"], "claude-sonnet-4-5");
  EXPECT_EQ(evs[evs.size() - 2].name, "message_delta");
  EXPECT_EQ(evs.back().name, "message_stop");
  std::string text;
  for (const auto& e : evs) {
    EXPECT_NE(e.name, "error") << r->body;
    if (e.name == "content_block_delta") {
      EXPECT_EQ(e.data["index"], 0);
      text += e.data["delta"]["text"].get<std::string>();
    }
  }
  const std::string expected = h.expected_text(plain_prompt("Hello"), 12);
  EXPECT_EQ(text, expected);
  const json& end = evs[evs.size() - 2].data;
  EXPECT_EQ(end["delta"]["stop_reason"], expected.size() == 12 ? "max_tokens" : "end_turn");
  EXPECT_EQ(end["usage"]["output_tokens"], expected.size());
  EXPECT_EQ(
      end["usage"]["input_tokens"].get<int>() + end["usage"]["cache_read_input_tokens"].get<int>(),
      static_cast<int>(plain_prompt("Hello").size()));
  EXPECT_TRUE(h.wait_idle());
}

TEST(AnthropicApi, StopSequenceIsNamedAndPromptSizeComesFirst) {
  ServerHarness h;
  const std::string expected = h.expected_text(plain_prompt("Hello"), 12);
  ASSERT_GE(expected.size(), 4u);
  // A stop string from inside the answer: the text ends before it and the message says which.
  size_t at = 2;
  while (at + 2 < expected.size() && expected.find(expected.substr(at, 2)) != at) ++at;
  const std::string stop = expected.substr(at, 2);
  ASSERT_EQ(expected.find(stop), at);
  json body = hello(false);
  body["stop_sequences"] = json::array({"never-there", stop});
  auto r = post(*h.client(), "/v1/messages", body);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = parse(r->body);
  EXPECT_EQ(j["stop_reason"], "stop_sequence") << r->body;
  EXPECT_EQ(j["stop_sequence"], stop);
  EXPECT_EQ(j["content"][0]["text"], expected.substr(0, at));
  body["stream"] = true;
  r = post(*h.client(), "/v1/messages", body);
  ASSERT_TRUE(r);
  auto evs = events_of(r->body);
  ASSERT_GE(evs.size(), 3u) << r->body;
  EXPECT_EQ(evs.front().data["message"]["usage"]["input_tokens"],
            static_cast<int>(plain_prompt("Hello").size()));
  const json& end = evs[evs.size() - 2].data;
  EXPECT_EQ(end["delta"]["stop_reason"], "stop_sequence");
  EXPECT_EQ(end["delta"]["stop_sequence"], stop);
  EXPECT_TRUE(h.wait_idle());
}

TEST(AnthropicApi, ToolHistoryIsRendered) {
  ServerHarness h;
  json body = hello(false);
  body["tools"] = json::array({{{"name", "weather"}, {"input_schema", {{"type", "object"}}}},
                               {{"type", "web_search_20250305"}, {"name", "web_search"}}});
  body["messages"] = json::array(
      {{{"role", "user"}, {"content", "Paris?"}},
       {{"role", "assistant"},
        {"content",
         {{{"type", "tool_use"},
           {"id", "toolu_1"},
           {"name", "weather"},
           {"input", {{"city", "Paris"}}}}}}},
       {{"role", "user"},
        {"content", {{{"type", "tool_result"}, {"tool_use_id", "toolu_1"}, {"content", "21C"}}}}}});
  auto r = post(*h.client(), "/v1/messages", body);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(parse(r->body)["type"], "message");
}

// output_config.format holds the answer to the schema, as chat's response_format does.
TEST(AnthropicApi, StructuredOutput) {
  // The fake codec names no end-of-generation token, so the mask takes the default eog id (2)
  // for the '"' it prints as; one that prints as 'a', which the schema never allows, keeps the
  // fake model from ending inside the object.
  FixtureOptions o;
  o.engine.eog_id = 255;
  ServerHarness h(o);
  json body = hello(false);
  body["max_tokens"] = 200;
  body["output_config"] = {
      {"format",
       {{"type", "json_schema"},
        {"schema",
         {{"type", "object"},
          {"properties", {{"n", {{"type", "integer"}, {"minimum", 0}, {"maximum", 99}}}}},
          {"required", {"n"}},
          {"additionalProperties", false}}}}}};
  auto r = post(*h.client(), "/v1/messages", body);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = parse(r->body);
  ASSERT_EQ(j["content"].size(), 1u) << r->body;
  json answer = json::parse(j["content"][0]["text"].get<std::string>(), nullptr, false);
  ASSERT_TRUE(answer.is_object()) << r->body;
  EXPECT_TRUE(answer["n"].is_number_integer()) << r->body;
  EXPECT_EQ(j["stop_reason"], "end_turn");
}

// An engine failure after the request was accepted: a 500 body, or an error event that ends the
// stream, both in Anthropic's shape.
TEST(AnthropicApi, EngineFailure) {
  ServerHarness h;
  auto c = h.client();
  h.engine().fail_on(1);  // request ids count from 1
  expect_anthropic_error(post(*c, "/v1/messages", hello(false)), 500, "api_error", "plain");
  h.engine().fail_on(2);
  auto r = post(*c, "/v1/messages", hello(true));
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto evs = events_of(r->body);
  ASSERT_GE(evs.size(), 2u) << r->body;
  EXPECT_EQ(evs.front().name, "message_start");
  EXPECT_EQ(evs.back().name, "error");
  EXPECT_EQ(evs.back().data["error"]["type"], "api_error");
  EXPECT_TRUE(evs.back().data["error"]["message"].is_string());
  for (const auto& e : evs) EXPECT_NE(e.name, "message_stop");
  EXPECT_TRUE(h.wait_idle());
}

// While the model is slow to answer, the stream carries Anthropic's ping events.
TEST(AnthropicApi, PingWhileWaiting) {
  FixtureOptions o;
  o.server.keepalive_s = 0.02;
  o.engine.sleep_us_per_step = 60000;
  ServerHarness h(o);
  json body = hello(true);
  body["max_tokens"] = 3;
  auto r = post(*h.client(), "/v1/messages", body);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  auto evs = events_of(r->body);
  ASSERT_FALSE(evs.empty());
  EXPECT_EQ(evs.front().name, "message_start");
  EXPECT_EQ(evs.back().name, "message_stop");
  size_t pings = 0;
  for (const auto& e : evs) pings += e.name == "ping";
  EXPECT_GT(pings, 0u) << r->body;
}

TEST(AnthropicApi, CountTokens) {
  ServerHarness h;
  auto c = h.client();
  json body = {{"model", "claude-haiku-4-5"},
               {"system", "Be brief."},
               {"messages", {{{"role", "user"}, {"content", "Hello"}}}}};
  auto r = post(*c, "/v1/messages/count_tokens", body);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(parse(r->body), json({{"input_tokens", plain_prompt("Hello", "Be brief.").size()}}));
  body.erase("messages");
  expect_anthropic_error(post(*c, "/v1/messages/count_tokens", body), 400, "invalid_request_error",
                         "count_tokens without messages");
}

TEST(AnthropicApi, ErrorsInAnthropicShape) {
  ServerHarness h;
  auto c = h.client();
  json body = hello(false);
  body.erase("max_tokens");
  auto r = post(*c, "/v1/messages", body);
  expect_anthropic_error(r, 400, "invalid_request_error", "no max_tokens");
  EXPECT_NE(r->body.find("max_tokens"), std::string::npos);
  body = hello(true);
  body["messages"][0]["content"] = json::array(
      {{{"type", "image"}, {"source", {{"type", "url"}, {"url", "https://example.com/a.png"}}}}});
  r = post(*c, "/v1/messages", body);
  expect_anthropic_error(r, 400, "invalid_request_error", "image");
  EXPECT_NE(r->body.find("images are not supported"), std::string::npos);
  r = c->Post("/v1/messages", "{not json", "application/json");
  expect_anthropic_error(r, 400, "invalid_request_error", "malformed JSON");
  // Over the context: refused by the pipeline, still in Anthropic's shape.
  body = hello(false);
  body["max_tokens"] = 4090;
  expect_anthropic_error(post(*c, "/v1/messages", body), 400, "invalid_request_error",
                         "over the context");
  expect_anthropic_error(post(*c, "/v1/messages/batches", hello(false)), 404, "not_found_error",
                         "an unknown path under /v1/messages");
  for (const char* path : {"/v1/messages", "/v1/messages/count_tokens"}) {
    r = c->Get(path);
    expect_anthropic_error(r, 405, "invalid_request_error", std::string("GET ") + path);
    EXPECT_EQ(r->get_header_value("Allow"), "POST");
  }
  EXPECT_TRUE(h.wait_idle());
}

TEST(AnthropicApi, ApiKeyAndLoading) {
  FixtureOptions o;
  o.server.api_key = "sekrit";
  o.attach = false;
  ServerHarness h(o);
  auto c = h.client();
  expect_anthropic_error(post(*c, "/v1/messages", hello(false)), 401, "authentication_error",
                         "no key");
  expect_anthropic_error(post(*c, "/v1/messages", hello(false), {{"x-api-key", "nope"}}), 401,
                         "authentication_error", "wrong key");
  auto r = post(*c, "/v1/messages", hello(false), {{"x-api-key", "sekrit"}});
  expect_anthropic_error(r, 503, "overloaded_error", "loading");
  h.attach();
  r = post(*c, "/v1/messages", hello(false),
           {{"x-api-key", "sekrit"}, {"anthropic-version", "2023-06-01"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  r = post(*c, "/v1/messages/count_tokens", hello(false), {{"x-api-key", "sekrit"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
}

}  // namespace
}  // namespace baton::server::testing
