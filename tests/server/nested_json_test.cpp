// JSON text inside a request's strings (tool call arguments) is parsed under the same nesting
// bound as the body: text nested 25,000 deep gets a 400 naming the field and the bound, before
// anything copies, walks or dumps it, and the server stays up. Also the helper that says so.
#include <gtest/gtest.h>

#include "server/api/json_fields.h"
#include "server/errors.h"
#include "server_fixture.h"
#include "util/json_depth.h"

namespace baton::server::testing {
namespace {

using nlohmann::json;

// An object whose member holds arrays nested `depth` deep: {"a": [[...]]} nests depth + 1.
std::string deep_object(int depth) {
  return "{\"a\":" + std::string(depth, '[') + std::string(depth, ']') + "}";
}

constexpr int kHostileDepth = 25000;

json chat_with_arguments(const std::string& arguments) {
  return {{"messages",
           {{{"role", "user"}, {"content", "hi"}},
            {{"role", "assistant"},
             {"content", nullptr},
             {"tool_calls",
              {{{"id", "c1"},
                {"type", "function"},
                {"function", {{"name", "f"}, {"arguments", arguments}}}}}}},
            {{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "ok"}}}},
          {"max_tokens", 2}};
}

json responses_with_arguments(const std::string& arguments) {
  return {{"input",
           {{{"role", "user"}, {"content", "hi"}},
            {{"type", "function_call"}, {"call_id", "c1"}, {"name", "f"}, {"arguments", arguments}},
            {{"type", "function_call_output"}, {"call_id", "c1"}, {"output", "ok"}}}},
          {"max_output_tokens", 2}};
}

// 400, invalid_request_error, param `param`, a message naming the field and the bound.
void expect_too_deep(const httplib::Result& r, const std::string& param) {
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  expect_error_shape(r->body, param);
  json e = parse(r->body)["error"];
  EXPECT_EQ(e["type"], "invalid_request_error");
  EXPECT_EQ(e["param"], param) << r->body;
  const std::string msg = e["message"];
  EXPECT_NE(msg.find(param), std::string::npos) << msg;
  EXPECT_NE(msg.find(std::to_string(util::kMaxJsonDepth)), std::string::npos) << msg;
}

void expect_healthy(httplib::Client& c) {
  auto health = c.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

TEST(NestedJsonText, ChatToolCallArgumentsTooDeepAre400) {
  ServerHarness h;
  auto c = h.client();
  for (const std::string& args : {deep_object(kHostileDepth), std::string(kHostileDepth, '[') + "]",
                                  deep_object(util::kMaxJsonDepth)}) {
    auto r = c->Post("/v1/chat/completions", chat_with_arguments(args).dump(), "application/json");
    expect_too_deep(r, "messages[1].tool_calls[0].function.arguments");
    expect_healthy(*c);
  }
  EXPECT_TRUE(h.wait_idle());
}

// At the bound itself the arguments are read and the request runs.
TEST(NestedJsonText, ChatToolCallArgumentsAtTheBoundAreServed) {
  ServerHarness h;
  auto c = h.client();
  auto r =
      c->Post("/v1/chat/completions",
              chat_with_arguments(deep_object(util::kMaxJsonDepth - 1)).dump(), "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_TRUE(h.wait_idle());
}

TEST(NestedJsonText, ResponsesFunctionCallArgumentsTooDeepAre400) {
  ServerHarness h;
  auto c = h.client();
  auto r = c->Post("/v1/responses", responses_with_arguments(deep_object(kHostileDepth)).dump(),
                   "application/json");
  expect_too_deep(r, "input[1].arguments");
  expect_healthy(*c);
  r = c->Post("/v1/responses",
              responses_with_arguments(deep_object(util::kMaxJsonDepth - 1)).dump(),
              "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_TRUE(h.wait_idle());
}

// Anthropic's tool_use input is JSON in the body, not text in a string: the body's own bound
// refuses it.
TEST(NestedJsonText, AnthropicToolUseInputTooDeepIs400) {
  ServerHarness h;
  auto c = h.client();
  const std::string body =
      R"({"model":"m","max_tokens":2,"messages":[{"role":"user","content":"hi"},)"
      R"({"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":)" +
      deep_object(kHostileDepth) +
      R"(}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1",)"
      R"("content":"ok"}]}]})";
  auto r = c->Post("/v1/messages", body, "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find(std::to_string(util::kMaxJsonDepth)), std::string::npos) << r->body;
  expect_healthy(*c);
}

TEST(NestedJsonText, JsonTextHelper) {
  const std::string param = "messages[3].tool_calls[0].function.arguments";
  EXPECT_EQ(fields::json_text(R"({"a": [1, {"b": null}]})", param),
            nlohmann::ordered_json::parse(R"({"a": [1, {"b": null}]})"));
  EXPECT_TRUE(fields::json_text("{oops", param).is_discarded());
  EXPECT_TRUE(fields::json_text(deep_object(util::kMaxJsonDepth - 1), param).is_object());
  try {
    fields::json_text(deep_object(kHostileDepth), param);
    FAIL() << "no error";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.param, param);
    EXPECT_NE(std::string(e.what()).find("64"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace baton::server::testing
