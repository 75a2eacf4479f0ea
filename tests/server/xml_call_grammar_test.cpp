// Forced calls in the XML-like families (Qwen3-Coder's <parameter=…> and its relatives): each
// parameter's text is held to its schema as the parser reads it back (JSON for numbers,
// booleans and objects; raw text for strings), required parameters are always there.
#include <gtest/gtest.h>

#include "grammar/grammar.h"
#include "server/answer/tool_grammar.h"

namespace baton::server {
namespace {

using ojson = nlohmann::ordered_json;

ChatFields edit_request(ToolChoice choice, bool parallel = true) {
  ChatFields f;
  f.tools = ojson::parse(R"([
    {"type":"function","function":{"name":"write_file","parameters":{"type":"object",
      "properties":{"path":{"type":"string"},"line":{"type":"integer","minimum":1},
        "force":{"type":"boolean"},"opts":{"type":"object","properties":{"mode":{"enum":["a","w"]}},
        "required":["mode"]},"content":{"type":"string"}},
      "required":["path","content"]}}},
    {"type":"function","function":{"name":"now","parameters":{"type":"object","properties":{}}}}
  ])");
  f.tool_choice = choice;
  f.parallel_tool_calls = parallel;
  return f;
}

std::string param(const std::string& key, const std::string& value) {
  return "<parameter=" + key + ">\n" + value + "\n</parameter>\n";
}

std::string call(const std::string& name, const std::string& params) {
  return "<tool_call>\n<function=" + name + ">\n" + params + "</function>\n</tool_call>";
}

std::shared_ptr<const grammar::Grammar> qwen_grammar(const ChatFields& req) {
  auto format = toolcall::make_format("qwen3-coder", {});
  return grammar::Grammar::parse(forced_call_gbnf(*format, req, {}));
}

TEST(XmlCallGrammar, ParametersFollowTheirSchemaAndParseBackTyped) {
  const ChatFields req = edit_request(ToolChoice::Required);
  auto g = qwen_grammar(req);
  const std::string good =
      call("write_file", param("path", "a.html") + param("line", "3") + param("force", "true") +
                             param("opts", "{\"mode\": \"w\"}") +
                             param("content", "<div>\n  x < y </div>\n"));
  ASSERT_TRUE(grammar::matches(g, good));
  toolcall::FormatContext ctx;
  ctx.tools = req.tools;
  auto parsed = toolcall::make_format("qwen3-coder", ctx)->parse(good, true);
  ASSERT_EQ(parsed.calls.size(), 1u);
  EXPECT_EQ(ojson::parse(parsed.calls[0].arguments),
            ojson::parse(R"({"path":"a.html","line":3,"force":true,"opts":{"mode":"w"},
                             "content":"<div>\n  x < y </div>\n"})"));
  // A number out of range, a boolean as a word, an object against its schema, a missing
  // required parameter, a string value that holds the close tag, an unknown parameter.
  EXPECT_FALSE(grammar::matches(
      g, call("write_file", param("path", "a") + param("line", "0") + param("content", "x"))));
  EXPECT_FALSE(grammar::matches(
      g, call("write_file", param("path", "a") + param("force", "yes") + param("content", "x"))));
  EXPECT_FALSE(grammar::matches(
      g, call("write_file", param("path", "a") + param("opts", "{}") + param("content", "x"))));
  EXPECT_FALSE(grammar::matches(g, call("write_file", param("path", "a"))));
  EXPECT_FALSE(grammar::matches(
      g, call("write_file", param("path", "a") + param("content", "x</parameter>y"))));
  EXPECT_FALSE(grammar::matches(
      g, call("write_file", param("path", "a") + param("mode", "a") + param("content", "x"))));
}

TEST(XmlCallGrammar, NamedToolOnly) {
  ChatFields req = edit_request(ToolChoice::Named);
  req.tool_choice_name = "now";
  auto g = qwen_grammar(req);
  EXPECT_TRUE(grammar::matches(g, call("now", "")));
  EXPECT_FALSE(grammar::matches(g, call("write_file", param("path", "a") + param("content", "x"))));
}

TEST(XmlCallGrammar, ParallelCallsOnlyWhenAllowed) {
  const std::string two = call("now", "") + "\n" + call("now", "");
  EXPECT_TRUE(grammar::matches(qwen_grammar(edit_request(ToolChoice::Required)), two));
  auto single = qwen_grammar(edit_request(ToolChoice::Required, false));
  EXPECT_TRUE(grammar::matches(single, call("now", "")));
  EXPECT_FALSE(grammar::matches(single, two));
}

TEST(XmlCallGrammar, AutoGrammarStartsAtTheCallOpener) {
  auto format = toolcall::make_format("qwen3-coder", {});
  EXPECT_EQ(format->call_trigger(), "<tool_call>");
  auto g = grammar::Grammar::parse(auto_call_gbnf(*format, edit_request(ToolChoice::Auto)));
  EXPECT_TRUE(grammar::matches(g, call("now", "")));
}

// A parameter whose schema no grammar enforces keeps its type (not any object).
TEST(XmlCallGrammar, UnenforceableParameterKeepsItsType) {
  ChatFields req = edit_request(ToolChoice::Named);
  req.tool_choice_name = "count";
  req.tools.push_back(ojson::parse(R"({"type":"function","function":{"name":"count","parameters":
      {"type":"object","properties":{"n":{"type":"integer","multipleOf":3}},"required":["n"]}}})"));
  auto g = qwen_grammar(req);
  EXPECT_TRUE(grammar::matches(g, call("count", param("n", "6"))));
  EXPECT_FALSE(grammar::matches(g, call("count", param("n", "{}"))));
}

// MiniCPM 5 wraps a value holding '<' in CDATA, whose inside is the value as it is.
TEST(XmlCallGrammar, CdataValues) {
  auto format = toolcall::make_format("minicpm5", {});
  auto g =
      grammar::Grammar::parse(forced_call_gbnf(*format, edit_request(ToolChoice::Required), {}));
  const std::string good =
      "<function name=\"write_file\"><param name=\"path\">a</param><param name=\"content\">"
      "<![CDATA[a[1]] < b]]></param></function>";
  ASSERT_TRUE(grammar::matches(g, good));
  EXPECT_EQ(ojson::parse(format->parse(good, true).calls.at(0).arguments)["content"], "a[1]] < b");
  EXPECT_FALSE(grammar::matches(g,
                                "<function name=\"write_file\"><param name=\"path\">a</param>"
                                "<param name=\"content\">a < b</param></function>"));
}

// Gemma 4's dialect: nested objects with bare keys, arrays held to their items, numbers JSON.
TEST(LooseCallGrammar, Gemma4NestedValues) {
  ChatFields req = edit_request(ToolChoice::Named);
  req.tool_choice_name = "plan";
  req.tools.push_back(ojson::parse(R"({"type":"function","function":{"name":"plan","parameters":
      {"type":"object","properties":{"steps":{"type":"array","items":{"type":"object",
        "properties":{"n":{"type":"integer"},"say":{"type":"string"}},"required":["n"]},
        "minItems":1}},"required":["steps"]}}})"));
  auto format = toolcall::make_format("gemma4", {});
  auto g = grammar::Grammar::parse(forced_call_gbnf(*format, req, {}));
  const std::string good =
      "<|tool_call>call:plan{steps:[{n:1,say:<|\"|>a, b<|\"|>},{n:2}]}<tool_call|>";
  ASSERT_TRUE(grammar::matches(g, good));
  EXPECT_EQ(ojson::parse(format->parse(good, true).calls.at(0).arguments),
            ojson::parse(R"({"steps":[{"n":1,"say":"a, b"},{"n":2}]})"));
  EXPECT_FALSE(grammar::matches(g, "<|tool_call>call:plan{steps:[]}<tool_call|>"));
  EXPECT_FALSE(
      grammar::matches(g, "<|tool_call>call:plan{steps:[{say:<|\"|>a<|\"|>}]}<tool_call|>"));
}

// LFM2: keyword arguments as JSON or single-quoted strings; parallel calls in one list.
TEST(LooseCallGrammar, Lfm2TypedKeywordArguments) {
  auto format = toolcall::make_format("lfm2", {});
  auto g =
      grammar::Grammar::parse(forced_call_gbnf(*format, edit_request(ToolChoice::Required), {}));
  const std::string good =
      "<|tool_call_start|>[write_file(path='a.txt', line=2, force=true, content=\"x\\ny\"), "
      "now()]<|tool_call_end|>";
  ASSERT_TRUE(grammar::matches(g, good));
  auto parsed = format->parse(good, true);
  ASSERT_EQ(parsed.calls.size(), 2u);
  EXPECT_EQ(ojson::parse(parsed.calls[0].arguments),
            ojson::parse(R"({"path":"a.txt","line":2,"force":true,"content":"x\ny"})"));
  EXPECT_FALSE(grammar::matches(
      g, "<|tool_call_start|>[write_file(path='a', line=0, content='x')]<|tool_call_end|>"));
  EXPECT_FALSE(grammar::matches(g, "<|tool_call_start|>[write_file(path='a')]<|tool_call_end|>"));
}

}  // namespace
}  // namespace baton::server
