// OpenAI's Responses API: a request body read into the chat pipeline's ChatRequest.
#include "server/api/responses_request.h"

#include <gtest/gtest.h>

#include "responses_samples.h"
#include "server/errors.h"

namespace baton::server::testing {
namespace {

using nlohmann::json;

RequestLimits limits() {
  RequestLimits l;
  l.max_tokens_limit = 4096;
  l.ctx = 8192;
  return l;
}

ResponsesRequest parse_body(const json& body) {
  return parse_responses_request(body.dump(), limits());
}

// The 400 a body gets.
ApiError refusal(const json& body) {
  try {
    parse_body(body);
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << body.dump();
  return ApiError(0, "");
}

// ---- request translation ----
TEST(ResponsesRequest, StringInputAndInstructions) {
  auto r = parse_body({{"model", "m"},
                       {"instructions", "Be brief."},
                       {"input", "Hello"},
                       {"max_output_tokens", 50},
                       {"temperature", 0.5},
                       {"top_p", 0.9},
                       {"stream", true},
                       {"user", "u1"}});
  const auto& msgs = r.chat.chat.messages;
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0]["role"], "system");
  EXPECT_EQ(msgs[0]["content"], "Be brief.");
  EXPECT_EQ(msgs[1]["role"], "user");
  EXPECT_EQ(msgs[1]["content"], "Hello");
  EXPECT_EQ(r.chat.common.model, "m");
  EXPECT_EQ(r.chat.common.max_tokens, 50);
  EXPECT_FLOAT_EQ(r.chat.common.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(r.chat.common.sampling.top_p, 0.9f);
  EXPECT_TRUE(r.chat.common.stream);
  EXPECT_EQ(r.chat.common.n, 1);
  EXPECT_EQ(r.chat.common.user, "u1");
  EXPECT_TRUE(r.chat.chat.tools.empty());
  const json& e = r.echo.settings;
  EXPECT_EQ(e["instructions"], "Be brief.");
  EXPECT_EQ(e["max_output_tokens"], 50);
  EXPECT_EQ(e["temperature"], 0.5);
  EXPECT_EQ(e["store"], false);
  EXPECT_EQ(e["tool_choice"], "auto");
  EXPECT_EQ(e["tools"], json::array());
  EXPECT_EQ(e["text"], json({{"format", {{"type", "text"}}}}));
  EXPECT_EQ(e["parallel_tool_calls"], true);
  EXPECT_EQ(e["user"], "u1");
  EXPECT_TRUE(e["previous_response_id"].is_null());
}

TEST(ResponsesRequest, FunctionCallRoundTrip) {
  json input = json::array();
  input.push_back(text_item("developer", "You are a coding agent."));
  input.push_back({{"type", "message"},
                   {"id", "msg_1"},
                   {"status", "completed"},
                   {"role", "user"},
                   {"content",
                    {{{"type", "input_text"}, {"text", "Read "}},
                     {{"type", "input_text"}, {"text", "both files"}}}}});
  input.push_back({{"type", "reasoning"},
                   {"id", "rs_1"},
                   {"summary", json::array()},
                   {"content", {{{"type", "reasoning_text"}, {"text", "Two reads."}}}},
                   {"encrypted_content", "opaque"}});
  input.push_back({{"type", "function_call"},
                   {"id", "fc_1"},
                   {"call_id", "call_a"},
                   {"name", "read"},
                   {"arguments", "{\"path\":\"a.txt\"}"},
                   {"status", "completed"}});
  input.push_back({{"type", "function_call"},
                   {"call_id", "call_b"},
                   {"name", "read"},
                   {"arguments", "{\"path\":\"b.txt\"}"}});
  input.push_back({{"type", "function_call_output"}, {"call_id", "call_a"}, {"output", "A"}});
  input.push_back({{"type", "function_call_output"},
                   {"call_id", "call_b"},
                   {"output", {{{"type", "input_text"}, {"text", "B"}}}}});
  input.push_back(text_item("assistant", "Both read.", "output_text"));
  auto r = parse_body({{"input", input}, {"tools", {function_tool("read")}}});
  const auto& m = r.chat.chat.messages;
  ASSERT_EQ(m.size(), 6u) << m.dump();
  EXPECT_EQ(m[0]["role"], "developer");
  EXPECT_EQ(m[1]["content"], "Read both files");
  EXPECT_EQ(m[2]["role"], "assistant");
  EXPECT_EQ(m[2]["content"], "");
  EXPECT_EQ(m[2]["reasoning_content"], "Two reads.");
  ASSERT_EQ(m[2]["tool_calls"].size(), 2u);
  EXPECT_EQ(m[2]["tool_calls"][0]["id"], "call_a");
  EXPECT_EQ(m[2]["tool_calls"][0]["function"]["name"], "read");
  EXPECT_EQ(m[2]["tool_calls"][0]["function"]["arguments"], json({{"path", "a.txt"}}));
  EXPECT_EQ(m[2]["tool_calls"][1]["id"], "call_b");
  EXPECT_EQ(m[3]["role"], "tool");
  EXPECT_EQ(m[3]["tool_call_id"], "call_a");
  EXPECT_EQ(m[3]["content"], "A");
  EXPECT_EQ(m[3]["name"], "read");
  EXPECT_EQ(m[4]["tool_call_id"], "call_b");
  EXPECT_EQ(m[4]["content"], "B");
  EXPECT_EQ(m[5]["role"], "assistant");
  EXPECT_EQ(m[5]["content"], "Both read.");
  EXPECT_FALSE(m[5].contains("reasoning_content"));
  ASSERT_EQ(r.chat.chat.tools.size(), 1u);
  EXPECT_EQ(r.chat.chat.tools[0]["type"], "function");
  EXPECT_EQ(r.chat.chat.tools[0]["function"]["name"], "read");
  EXPECT_EQ(r.chat.chat.tools[0]["function"]["description"], "Does read");
  EXPECT_EQ(r.chat.chat.tools[0]["function"]["parameters"]["type"], "object");
}

TEST(ResponsesRequest, AssistantTextAndItsCallsAreOneTurn) {
  auto r = parse_body(
      {{"input",
        {text_item("user", "hi"),
         {{"type", "reasoning"},
          {"summary", {{{"type", "summary_text"}, {"text", "Look first."}}}}},
         text_item("assistant", "Let me look.", "output_text"),
         {{"type", "function_call"}, {"call_id", "c1"}, {"name", "read"}, {"arguments", "{}"}}}},
       {"tools", {function_tool("read")}}});
  const auto& m = r.chat.chat.messages;
  ASSERT_EQ(m.size(), 2u) << m.dump();
  EXPECT_EQ(m[1]["content"], "Let me look.");
  EXPECT_EQ(m[1]["reasoning_content"], "Look first.");  // the summary when no content came
  ASSERT_EQ(m[1]["tool_calls"].size(), 1u);
  EXPECT_EQ(m[1]["tool_calls"][0]["function"]["arguments"], json::object());
}

TEST(ResponsesRequest, ReasoningWithoutAnAnswerIsDropped) {
  auto r = parse_body({{"input",
                        {text_item("user", "a"),
                         {{"type", "reasoning"}, {"summary", json::array()}},
                         {{"type", "reasoning"},
                          {"summary", json::array()},
                          {"content", {{{"type", "reasoning_text"}, {"text", "lost"}}}}},
                         text_item("user", "b"),
                         text_item("assistant", "ok", "output_text")}}});
  const auto& m = r.chat.chat.messages;
  ASSERT_EQ(m.size(), 3u);
  EXPECT_FALSE(m[2].contains("reasoning_content")) << m.dump();
}

TEST(ResponsesRequest, NamespaceToolsAreFlattenedAndBuiltinsLeftOut) {
  json ns = {{"type", "namespace"},
             {"name", "crm"},
             {"description", "Customer records"},
             {"tools", {function_tool("lookup"), function_tool("update")}}};
  json tools = {function_tool("shell"),
                ns,
                {{"type", "web_search"}},
                {{"type", "file_search"}, {"vector_store_ids", {"vs_1"}}},
                {{"type", "custom"}, {"name", "apply_patch"}},
                {{"type", "mcp"}, {"server_label", "x"}}};
  auto r = parse_body({{"input", "hi"}, {"tools", tools}});
  const auto& t = r.chat.chat.tools;
  ASSERT_EQ(t.size(), 3u) << t.dump();
  EXPECT_EQ(t[0]["function"]["name"], "shell");
  EXPECT_EQ(t[1]["function"]["name"], "lookup");
  EXPECT_EQ(t[2]["function"]["name"], "update");
  ASSERT_EQ(r.echo.namespaced.size(), 2u);
  EXPECT_EQ(r.echo.namespaced.at("lookup").ns, "crm");
  EXPECT_EQ(r.echo.namespaced.at("lookup").name, "lookup");
  EXPECT_EQ(r.echo.settings["tools"], tools);  // the response repeats what was asked
}

TEST(ResponsesRequest, ClashingNamespacedNamesGetTheirNamespace) {
  json tools = {function_tool("search"),
                {{"type", "namespace"},
                 {"name", "crm"},
                 {"description", ""},
                 {"tools", {function_tool("search")}}},
                {{"type", "namespace"},
                 {"name", "mcp__files__"},
                 {"description", ""},
                 {"tools", {function_tool("search"), function_tool("read")}}}};
  json input = {text_item("user", "x"),
                {{"type", "function_call"},
                 {"call_id", "c1"},
                 {"namespace", "mcp__files__"},
                 {"name", "search"},
                 {"arguments", "{}"}}};
  auto r = parse_body({{"input", input}, {"tools", tools}});
  const auto& t = r.chat.chat.tools;
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0]["function"]["name"], "search");
  EXPECT_EQ(t[1]["function"]["name"], "crm__search");
  EXPECT_EQ(t[2]["function"]["name"], "mcp__files__search");
  EXPECT_EQ(t[3]["function"]["name"], "read");
  EXPECT_EQ(r.echo.namespaced.at("crm__search").ns, "crm");
  EXPECT_EQ(r.echo.namespaced.at("mcp__files__search").name, "search");
  EXPECT_EQ(r.echo.namespaced.at("read").ns, "mcp__files__");
  // A call the client reports by namespace and name is the name the model saw.
  EXPECT_EQ(r.chat.chat.messages[1]["tool_calls"][0]["function"]["name"], "mcp__files__search");
}

TEST(ResponsesRequest, ToolChoiceVariants) {
  json tools = {function_tool("a"), function_tool("b")};
  auto with = [&](const json& tc) {
    return parse_body({{"input", "x"}, {"tools", tools}, {"tool_choice", tc}});
  };
  EXPECT_EQ(with("required").chat.chat.tool_choice, ToolChoice::Required);
  EXPECT_EQ(with("none").chat.chat.tool_choice, ToolChoice::None);
  auto named = with({{"type", "function"}, {"name", "b"}});
  EXPECT_EQ(named.chat.chat.tool_choice, ToolChoice::Named);
  EXPECT_EQ(named.chat.chat.tool_choice_name, "b");
  EXPECT_EQ(named.echo.settings["tool_choice"], json({{"type", "function"}, {"name", "b"}}));
  auto allowed = with({{"type", "allowed_tools"},
                       {"mode", "required"},
                       {"tools", {{{"type", "function"}, {"name", "b"}}}}});
  EXPECT_EQ(allowed.chat.chat.tool_choice, ToolChoice::Required);
  ASSERT_EQ(allowed.chat.chat.tools.size(), 1u);
  EXPECT_EQ(allowed.chat.chat.tools[0]["function"]["name"], "b");
  auto e = refusal({{"input", "x"}, {"tools", tools}, {"tool_choice", {{"type", "file_search"}}}});
  EXPECT_EQ(e.param, "tool_choice");
  e = refusal({{"input", "x"}, {"tools", tools}, {"tool_choice", "sometimes"}});
  EXPECT_EQ(e.param, "tool_choice");
  e = refusal({{"input", "x"}, {"tools", tools}, {"tool_choice", {{"type", "function"}}}});
  EXPECT_EQ(e.param, "tool_choice.name");
  e = refusal({{"input", "x"}, {"tool_choice", "required"}});
  EXPECT_EQ(e.param, "tool_choice");
  auto parallel = parse_body({{"input", "x"}, {"tools", tools}, {"parallel_tool_calls", false}});
  EXPECT_FALSE(parallel.chat.chat.parallel_tool_calls);
  EXPECT_EQ(parallel.echo.settings["parallel_tool_calls"], false);
}

TEST(ResponsesRequest, TextFormatConstrainsTheAnswer) {
  // Written by hand so that "y" comes before "x", as the client ordered it.
  std::string body =
      R"({"input": "p", "text": {"format": {"type": "json_schema", "name": "point", )"
      R"("schema": {"type": "object", "properties": {"y": {"type": "number"}, )"
      R"("x": {"type": "number"}}}}, "verbosity": "low"}})";
  auto r = parse_responses_request(body, limits());
  const auto& c = r.chat.common.constraint;
  EXPECT_EQ(c.kind, constraint::ConstraintSpec::Kind::JsonSchema);
  EXPECT_EQ(c.field, "text.format");
  EXPECT_EQ(c.schema["properties"].begin().key(), "y");
  EXPECT_EQ(r.echo.settings["text"]["format"]["name"], "point");
  EXPECT_EQ(r.echo.settings["text"]["verbosity"], "low");
  auto obj = parse_body({{"input", "p"}, {"text", {{"format", {{"type", "json_object"}}}}}});
  EXPECT_EQ(obj.chat.common.constraint.kind, constraint::ConstraintSpec::Kind::JsonObject);
  auto plain = parse_body({{"input", "p"}, {"text", {{"format", {{"type", "text"}}}}}});
  EXPECT_FALSE(plain.chat.common.constraint.active());
  auto e = refusal({{"input", "p"}, {"text", {{"format", {{"type", "json_schema"}}}}}});
  EXPECT_EQ(e.param, "text.format");
  e = refusal({{"input", "p"}, {"text", {{"format", {{"type", "yaml"}}}}}});
  EXPECT_EQ(e.param, "text.format");
}

TEST(ResponsesRequest, CodexCliRequestIsAccepted) {
  auto r = parse_body(codex_request());
  const auto& m = r.chat.chat.messages;
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0]["role"], "developer");
  EXPECT_EQ(m[2]["content"], "List the files.");
  ASSERT_EQ(r.chat.chat.tools.size(), 7u);  // shell, five fs functions, update_plan
  EXPECT_EQ(r.chat.chat.tools[1]["function"]["name"], "list_dir");
  EXPECT_EQ(r.echo.namespaced.at("stat").ns, "mcp__fs__");
  EXPECT_FALSE(r.chat.chat.parallel_tool_calls);
  EXPECT_FALSE(r.chat.common.max_tokens.has_value());
  EXPECT_FALSE(r.chat.common.constraint.active());
  EXPECT_TRUE(r.chat.common.stream);
  EXPECT_EQ(r.echo.settings["store"], false);
  EXPECT_EQ(r.echo.settings["reasoning"]["summary"], "auto");
  EXPECT_TRUE(r.echo.settings["reasoning"]["effort"].is_null());
  EXPECT_EQ(r.echo.settings["prompt_cache_key"], "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b");
  // store: true is accepted too (nothing is stored either way).
  json stored = codex_request();
  stored["store"] = true;
  EXPECT_EQ(parse_body(stored).echo.settings["store"], false);
}

TEST(ResponsesRequest, ReasoningEffortReachesTheTemplate) {
  auto r = parse_body({{"input", "x"}, {"reasoning", {{"effort", "low"}, {"summary", nullptr}}}});
  EXPECT_EQ(r.chat.chat.template_kwargs["reasoning_effort"], "low");
  EXPECT_EQ(r.echo.settings["reasoning"]["effort"], "low");
}

TEST(ResponsesRequest, StoredStateIsRefused) {
  auto e = refusal({{"input", "x"}, {"previous_response_id", "resp_123"}});
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.type, "invalid_request_error");
  EXPECT_EQ(e.param, "previous_response_id");
  EXPECT_NE(std::string(e.what()).find("input items"), std::string::npos) << e.what();
  EXPECT_EQ(refusal({{"input", "x"}, {"conversation", "conv_1"}}).param, "conversation");
  EXPECT_EQ(refusal({{"input", "x"}, {"background", true}}).param, "background");
  EXPECT_EQ(refusal({{"input", {{{"type", "item_reference"}, {"id", "msg_1"}}}}}).param,
            "input[0].type");
}

TEST(ResponsesRequest, WrongFieldsAreNamed) {
  struct Case {
    json body;
    std::string param;
  };
  json call = {{"type", "function_call"}, {"call_id", "c"}, {"name", "f"}, {"arguments", "{}"}};
  json no_call_id = call;
  no_call_id.erase("call_id");
  json bad_args = call;
  bad_args["arguments"] = "not json";
  json ns_bad_params = {{"type", "namespace"},
                        {"name", "ns"},
                        {"tools", {{{"type", "function"}, {"name", "f"}, {"parameters", 3}}}}};
  const std::vector<Case> cases = {
      {{{"input", 5}}, "input"},
      {{{"instructions", "x"}}, "input"},
      {{{"input", json::array()}}, "input"},
      {{{"input", {{{"type", "web_search_call"}, {"id", "ws_1"}}}}}, "input[0].type"},
      {{{"input", {"hi"}}}, "input[0]"},
      {{{"input", {{{"role", "tool"}, {"content", "x"}}}}}, "input[0].role"},
      {{{"input", {{{"role", "user"}}}}}, "input[0].content"},
      {{{"input", {{{"role", "user"}, {"content", 3}}}}}, "input[0].content"},
      {{{"input",
         {{{"role", "user"},
           {"content", {{{"type", "input_image"}, {"image_url", "http://x/y.png"}}}}}}}},
       "input[0].content[0].type"},
      {{{"input", {no_call_id}}}, "input[0].call_id"},
      {{{"input", {bad_args}}}, "input[0].arguments"},
      {{{"input", {text_item("user", "x"), {{"type", "function_call_output"}, {"call_id", "c"}}}}},
       "input[1].output"},
      {{{"input", {{{"type", "reasoning"}, {"summary", "s"}}}}}, "input[0].summary"},
      {{{"input", "x"}, {"max_output_tokens", "many"}}, "max_output_tokens"},
      {{{"input", "x"}, {"max_output_tokens", 100000}}, "max_output_tokens"},
      {{{"input", "x"}, {"temperature", 3}}, "temperature"},
      {{{"input", "x"}, {"n", 2}}, "n"},
      {{{"input", "x"}, {"store", "yes"}}, "store"},
      {{{"input", "x"}, {"instructions", 7}}, "instructions"},
      {{{"input", "x"}, {"metadata", "m"}}, "metadata"},
      {{{"input", "x"}, {"include", "reasoning"}}, "include"},
      {{{"input", "x"}, {"reasoning", {{"effort", 1}}}}, "reasoning.effort"},
      {{{"input", "x"}, {"tools", {{{"type", "function"}}}}}, "tools[0].name"},
      {{{"input", "x"}, {"tools", {{{"name", "f"}}}}}, "tools[0].type"},
      {{{"input", "x"}, {"tools", {function_tool("f"), function_tool("f")}}}, "tools[1].name"},
      {{{"input", "x"}, {"tools", {function_tool("f"), ns_bad_params}}},
       "tools[1].tools[0].parameters"},
      {{{"input", "x"}, {"tools", {function_tool("bad name")}}}, "tools[0].name"},
      {{{"input", "x"}, {"parallel_tool_calls", "no"}}, "parallel_tool_calls"},
  };
  for (const auto& c : cases) {
    auto e = refusal(c.body);
    EXPECT_EQ(e.status, 400) << c.body.dump();
    EXPECT_EQ(e.param, c.param) << c.body.dump() << " → " << e.what();
    EXPECT_EQ(e.type, "invalid_request_error") << c.body.dump();
    // The message names the field the client sent, never the chat translation's.
    EXPECT_EQ(std::string(e.what()).find("messages["), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find(".function."), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace baton::server::testing
