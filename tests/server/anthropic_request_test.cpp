// Anthropic's Messages API: how a Messages body is read into the chat pipeline's ChatRequest.
#include "server/api/anthropic_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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

MessagesRequest parse_body(const json& body) {
  return parse_messages_request(body.dump(), limits());
}

json user(const json& content) {
  return {{"role", "user"}, {"content", content}};
}

json base(json messages = json::array({user("hi")})) {
  return {{"model", "claude-sonnet-4-5"}, {"max_tokens", 100}, {"messages", std::move(messages)}};
}

// The 400 a body gets, with its param and message.
ApiError refusal(const json& body) {
  try {
    parse_body(body);
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << body.dump();
  return ApiError(0, "");
}

TEST(AnthropicRequest, SystemStringAndTextBlocks) {
  json body = base();
  body["system"] = "Be brief.";
  auto m = parse_body(body);
  ASSERT_EQ(m.chat.chat.messages.size(), 2u);
  EXPECT_EQ(m.chat.chat.messages[0]["role"], "system");
  EXPECT_EQ(m.chat.chat.messages[0]["content"], "Be brief.");
  EXPECT_EQ(m.chat.chat.messages[1]["role"], "user");
  EXPECT_EQ(m.chat.chat.messages[1]["content"], "hi");
  EXPECT_EQ(m.model, "claude-sonnet-4-5");
  EXPECT_EQ(m.chat.common.model, "");  // the served model answers

  body["system"] = json::array(
      {{{"type", "text"}, {"text", "One."}},
       {{"type", "text"}, {"text", "Two."}, {"cache_control", {{"type", "ephemeral"}}}}});
  m = parse_body(body);
  EXPECT_EQ(m.chat.chat.messages[0]["content"], "One.\n\nTwo.");

  body["system"] = json::array({{{"type", "image"}}});
  EXPECT_EQ(refusal(body).status, 400);
  body["system"] = 5;
  EXPECT_EQ(refusal(body).param, "system");
}

TEST(AnthropicRequest, ToolUseAndToolResultRoundTrip) {
  json body = base(json::array(
      {user("weather in Paris and Rome?"),
       {{"role", "assistant"},
        {"content",
         {{{"type", "thinking"}, {"thinking", "Two cities."}, {"signature", "sig"}},
          {{"type", "redacted_thinking"}, {"data", "xyz"}},
          {{"type", "text"}, {"text", "Checking."}},
          {{"type", "tool_use"},
           {"id", "toolu_1"},
           {"name", "weather"},
           {"input", {{"city", "Paris"}, {"unit", "c"}}}},
          {{"type", "tool_use"},
           {"id", "toolu_2"},
           {"name", "weather"},
           {"input", {{"city", "Rome"}}}}}}},
       user(json::array(
           {{{"type", "tool_result"}, {"tool_use_id", "toolu_1"}, {"content", "21C"}},
            {{"type", "tool_result"},
             {"tool_use_id", "toolu_2"},
             {"content",
              {{{"type", "text"}, {"text", "no"}}, {{"type", "text"}, {"text", "data"}}}},
             {"is_error", true}},
            {{"type", "text"}, {"text", "Thanks."}}}))}));
  body["tools"] = json::array({{{"name", "weather"},
                                {"description", "Weather now"},
                                {"input_schema", {{"type", "object"}}}}});
  auto m = parse_body(body);
  const auto& msgs = m.chat.chat.messages;
  ASSERT_EQ(msgs.size(), 5u) << msgs.dump();
  const auto& a = msgs[1];
  EXPECT_EQ(a["role"], "assistant");
  EXPECT_EQ(a["content"], "Checking.");
  EXPECT_EQ(a["reasoning_content"], "Two cities.");
  ASSERT_EQ(a["tool_calls"].size(), 2u);
  EXPECT_EQ(a["tool_calls"][0]["id"], "toolu_1");
  EXPECT_EQ(a["tool_calls"][0]["type"], "function");
  EXPECT_EQ(a["tool_calls"][0]["function"]["name"], "weather");
  // Arguments as an object, keys in the client's order, as transformers passes them.
  EXPECT_EQ(a["tool_calls"][0]["function"]["arguments"].dump(), R"({"city":"Paris","unit":"c"})");
  EXPECT_EQ(a["tool_calls"][1]["id"], "toolu_2");
  EXPECT_EQ(msgs[2]["role"], "tool");
  EXPECT_EQ(msgs[2]["tool_call_id"], "toolu_1");
  EXPECT_EQ(msgs[2]["content"], "21C");
  EXPECT_EQ(msgs[3]["role"], "tool");
  EXPECT_EQ(msgs[3]["tool_call_id"], "toolu_2");
  EXPECT_EQ(msgs[3]["content"], "Error: no\n\ndata");
  EXPECT_EQ(msgs[4]["role"], "user");
  EXPECT_EQ(msgs[4]["content"], "Thanks.");
  ASSERT_EQ(m.chat.chat.tools.size(), 1u);
  EXPECT_EQ(m.chat.chat.tools[0]["type"], "function");
  EXPECT_EQ(m.chat.chat.tools[0]["function"]["name"], "weather");
  EXPECT_EQ(m.chat.chat.tools[0]["function"]["description"], "Weather now");
  EXPECT_EQ(m.chat.chat.tools[0]["function"]["parameters"], json({{"type", "object"}}));

  // A user turn of tool results only adds no empty user message.
  body["messages"][2]["content"].erase(2);
  EXPECT_EQ(parse_body(body).chat.chat.messages.size(), 4u);
}

TEST(AnthropicRequest, BadToolBlocksAreRefusedByName) {
  json body = base(json::array(
      {user("x"),
       {{"role", "assistant"},
        {"content", {{{"type", "tool_use"}, {"id", "t"}, {"name", "f"}, {"input", "[1]"}}}}}}));
  EXPECT_EQ(refusal(body).param, "messages[1].content[0].input");
  body["messages"][1]["content"][0].erase("id");
  EXPECT_EQ(refusal(body).param, "messages[1].content[0].id");
  body = base(json::array({user(json::array({{{"type", "tool_result"}, {"content", "x"}}}))}));
  EXPECT_EQ(refusal(body).param, "messages[0].content[0].tool_use_id");
  body = base(json::array({user(json::array({{{"type", "tool_use"}, {"id", "t"}}}))}));
  EXPECT_EQ(refusal(body).param, "messages[0].content[0].type");
}

TEST(AnthropicRequest, ConsecutiveTurnsOfOneRoleAreMerged) {
  auto m = parse_body(
      base(json::array({user("a"), user(json::array({{{"type", "text"}, {"text", "b"}}}))})));
  ASSERT_EQ(m.chat.chat.messages.size(), 1u);
  EXPECT_EQ(m.chat.chat.messages[0]["content"], "a\n\nb");
}

TEST(AnthropicRequest, ThinkingSwitchesTheTemplate) {
  json body = base();
  EXPECT_FALSE(parse_body(body).chat.chat.template_kwargs.contains("enable_thinking"));
  body["thinking"] = {{"type", "enabled"}, {"budget_tokens", 2048}};
  EXPECT_EQ(parse_body(body).chat.chat.template_kwargs["enable_thinking"], true);
  body["thinking"] = {{"type", "disabled"}};
  EXPECT_EQ(parse_body(body).chat.chat.template_kwargs["enable_thinking"], false);
  body["thinking"] = {{"type", "adaptive"}};
  EXPECT_EQ(parse_body(body).chat.chat.template_kwargs["enable_thinking"], true);
  body["thinking"] = {{"type", "enabled"}, {"budget_tokens", 10}};
  EXPECT_EQ(refusal(body).param, "thinking.budget_tokens");
  body["thinking"] = {{"type", "enabled"}};
  EXPECT_EQ(refusal(body).param, "thinking.budget_tokens");
  body["thinking"] = {{"type", "maybe"}};
  EXPECT_EQ(refusal(body).param, "thinking.type");
  body["thinking"] = true;
  EXPECT_EQ(refusal(body).param, "thinking");
}

TEST(AnthropicRequest, ServerToolsAndTheirBlocksAreLeftOut) {
  json body = base(json::array({user("search"),
                                {{"role", "assistant"},
                                 {"content",
                                  {{{"type", "server_tool_use"},
                                    {"id", "srvtoolu_1"},
                                    {"name", "web_search"},
                                    {"input", {{"query", "q"}}}},
                                   {{"type", "web_search_tool_result"},
                                    {"tool_use_id", "srvtoolu_1"},
                                    {"content", json::array()}},
                                   {{"type", "text"}, {"text", "Found it."}}}}},
                                user("ok")}));
  body["tools"] =
      json::array({{{"type", "web_search_20250305"}, {"name", "web_search"}},
                   {{"type", "bash_20250124"}, {"name", "bash"}},
                   {{"type", "custom"}, {"name", "f"}, {"input_schema", {{"type", "object"}}}},
                   {{"type", "text_editor_20250728"}, {"name", "str_replace_based_edit_tool"}}});
  auto m = parse_body(body);
  ASSERT_EQ(m.chat.chat.tools.size(), 1u);
  EXPECT_EQ(m.chat.chat.tools[0]["function"]["name"], "f");
  ASSERT_EQ(m.chat.chat.messages.size(), 3u);
  EXPECT_EQ(m.chat.chat.messages[1]["content"], "Found it.");
  EXPECT_FALSE(m.chat.chat.messages[1].contains("tool_calls"));

  body["tools"][2].erase("input_schema");
  EXPECT_EQ(refusal(body).param, "tools[2].input_schema");
}

TEST(AnthropicRequest, ToolChoiceVariants) {
  json body = base();
  body["tools"] = json::array({{{"name", "f"}, {"input_schema", {{"type", "object"}}}}});
  auto choice = [&](const json& tc) {
    body["tool_choice"] = tc;
    return parse_body(body).chat.chat;
  };
  EXPECT_EQ(choice({{"type", "auto"}}).tool_choice, ToolChoice::Auto);
  EXPECT_TRUE(choice({{"type", "auto"}}).parallel_tool_calls);
  EXPECT_EQ(choice({{"type", "any"}}).tool_choice, ToolChoice::Required);
  EXPECT_EQ(choice({{"type", "none"}}).tool_choice, ToolChoice::None);
  auto named = choice({{"type", "tool"}, {"name", "f"}});
  EXPECT_EQ(named.tool_choice, ToolChoice::Named);
  EXPECT_EQ(named.tool_choice_name, "f");
  EXPECT_FALSE(choice({{"type", "any"}, {"disable_parallel_tool_use", true}}).parallel_tool_calls);

  body["tool_choice"] = {{"type", "tool"}, {"name", "g"}};
  EXPECT_EQ(refusal(body).param, "tool_choice");
  body["tool_choice"] = {{"type", "tool"}};
  EXPECT_EQ(refusal(body).param, "tool_choice.name");
  body["tool_choice"] = {{"type", "always"}};
  EXPECT_EQ(refusal(body).param, "tool_choice.type");
  body["tool_choice"] = "auto";
  EXPECT_EQ(refusal(body).param, "tool_choice");
  body["tool_choice"] = {{"type", "auto"}, {"disable_parallel_tool_use", "yes"}};
  EXPECT_EQ(refusal(body).param, "tool_choice.disable_parallel_tool_use");
  body.erase("tools");
  body["tool_choice"] = {{"type", "any"}};
  EXPECT_EQ(refusal(body).param, "tool_choice");
}

TEST(AnthropicRequest, GenerationFields) {
  json body = base();
  body["temperature"] = 0.5;
  body["top_p"] = 0.9;
  body["top_k"] = 40;
  body["stop_sequences"] = {"END", "STOP"};
  body["stream"] = true;
  body["metadata"] = {{"user_id", "u-1"}};
  body["service_tier"] = "auto";
  body["container"] = "c-1";
  body["mcp_servers"] = json::array();
  body["cache_control"] = {{"type", "ephemeral"}};
  auto c = parse_body(body).chat.common;
  EXPECT_FLOAT_EQ(c.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(c.sampling.top_p, 0.9f);
  EXPECT_EQ(c.sampling.top_k, 40);
  EXPECT_EQ(c.stop, (std::vector<std::string>{"END", "STOP"}));
  EXPECT_TRUE(c.stream);
  EXPECT_EQ(c.user, "u-1");
  ASSERT_TRUE(c.max_tokens);
  EXPECT_EQ(*c.max_tokens, 100);
  body["metadata"] = {{"user_id", 5}};
  EXPECT_EQ(refusal(body).param, "metadata.user_id");
  body.erase("metadata");
  // At or over the server's limit: as much as the server allows (its default).
  body["max_tokens"] = 32000;
  EXPECT_FALSE(parse_body(body).chat.common.max_tokens);
}

TEST(AnthropicRequest, StructuredOutput) {
  json body = base();
  body["output_config"] = {{"effort", "low"},
                           {"format", {{"type", "json_schema"}, {"schema", {{"type", "object"}}}}}};
  auto c = parse_body(body).chat.common;
  EXPECT_EQ(c.constraint.kind, constraint::ConstraintSpec::Kind::JsonSchema);
  EXPECT_EQ(c.constraint.schema, nlohmann::ordered_json({{"type", "object"}}));
  body["output_config"]["format"] = {{"type", "xml"}};
  EXPECT_EQ(refusal(body).param, "output_config.format");
}

TEST(AnthropicRequest, MissingAndWrongFieldsNameTheField) {
  struct Case {
    const char* field;
    json value;  // null: the field is removed
  };
  const std::vector<Case> cases = {
      {"max_tokens", nullptr},
      {"max_tokens", 0},
      {"max_tokens", "100"},
      {"model", nullptr},
      {"model", 5},
      {"messages", nullptr},
      {"messages", "hi"},
      {"messages", json::array()},
      {"temperature", 1.5},
      {"temperature", "hot"},
      {"top_p", 2},
      {"top_k", -1},
      {"stream", "yes"},
      {"stop_sequences", "END"},
      {"stop_sequences", {""}},
      {"metadata", "x"},
      {"service_tier", "fast"},
      {"mcp_servers", {{{"url", "x"}}}},
      {"system", json::object()},
      {"tools", json::object()},
      {"output_config", 1},
  };
  for (const auto& c : cases) {
    json body = base();
    if (c.value.is_null()) {
      body.erase(c.field);
    } else {
      body[c.field] = c.value;
    }
    ApiError e = refusal(body);
    EXPECT_EQ(e.status, 400) << c.field << " " << c.value.dump();
    EXPECT_EQ(e.param, c.field) << c.value.dump() << ": " << e.what();
    EXPECT_NE(std::string(e.what()).find(c.field), std::string::npos) << e.what();
    json shape = anthropic_error_json(e);
    EXPECT_EQ(shape["type"], "error");
    EXPECT_EQ(shape["error"]["type"], "invalid_request_error");
  }
  json body = base();
  body["stop_sequences"] = {"a", "b", "c", "d", "e"};
  EXPECT_NE(std::string(refusal(body).what()).find("at most 4"), std::string::npos);
  // Messages' own fields.
  EXPECT_EQ(refusal(base(json::array({{{"role", "bot"}, {"content", "x"}}}))).param,
            "messages[0].role");
  EXPECT_EQ(refusal(base(json::array({{{"role", "user"}}}))).param, "messages[0].content");
  EXPECT_EQ(refusal(base(json::array({user(json::array({{{"type", "video"}}}))}))).param,
            "messages[0].content[0].type");
}

TEST(AnthropicRequest, ImagesAndDocuments) {
  const json image = {
      {"type", "image"},
      {"source", {{"type", "base64"}, {"media_type", "image/png"}, {"data", "AAAA"}}}};
  ApiError e = refusal(
      base(json::array({user(json::array({{{"type", "text"}, {"text", "what?"}}, image}))})));
  EXPECT_EQ(e.param, "messages[0].content[1]");
  EXPECT_NE(std::string(e.what()).find("images are not supported"), std::string::npos) << e.what();

  // In a tool's result the image becomes a note, so an agent's conversation goes on.
  json body = base(json::array(
      {user("look"),
       {{"role", "assistant"},
        {"content",
         {{{"type", "tool_use"}, {"id", "t1"}, {"name", "read"}, {"input", json::object()}}}}},
       user(json::array(
           {{{"type", "tool_result"}, {"tool_use_id", "t1"}, {"content", {image}}}}))}));
  auto m = parse_body(body);
  EXPECT_NE(m.chat.chat.messages[2]["content"].get<std::string>().find("image omitted"),
            std::string::npos);
  EXPECT_EQ(m.chat.chat.messages[2]["name"], "read");

  const json doc = {{"type", "document"},
                    {"title", "Notes"},
                    {"source", {{"type", "text"}, {"media_type", "text/plain"}, {"data", "abc"}}}};
  m = parse_body(
      base(json::array({user(json::array({doc, {{"type", "text"}, {"text", "sum up"}}}))})));
  EXPECT_EQ(m.chat.chat.messages[0]["content"], "Notes\n\nabc\n\nsum up");
  json pdf = doc;
  pdf["source"] = {{"type", "base64"}, {"media_type", "application/pdf"}, {"data", "AAAA"}};
  EXPECT_EQ(refusal(base(json::array({user(json::array({pdf}))}))).param,
            "messages[0].content[0].source.type");
}

TEST(AnthropicRequest, CountTokensNeedsNoMaxTokens) {
  json body = base();
  body.erase("max_tokens");
  body["system"] = "S";
  auto m = parse_count_tokens_request(body.dump(), limits());
  EXPECT_EQ(m.chat.chat.messages.size(), 2u);
  body.erase("model");
  EXPECT_THROW(parse_count_tokens_request(body.dump(), limits()), ApiError);
}

}  // namespace
}  // namespace baton::server::testing
