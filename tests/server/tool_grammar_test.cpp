// Forced tool calls: the grammar of each format with a call grammar accepts that format's own
// spelling of a valid call (which its parser reads back as the call), and refuses arguments
// that break the tool's parameters, other tools' names and prose.
#include "server/answer/tool_grammar.h"

#include <gtest/gtest.h>

#include "grammar/grammar.h"

namespace baton::server {
namespace {

using ojson = nlohmann::ordered_json;

ChatFields weather_request(ToolChoice choice, bool parallel = true) {
  ChatFields f;
  f.tools = ojson::parse(R"([
    {"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
      "properties":{"city":{"type":"string"},"unit":{"enum":["c","f"]}},"required":["city"]}}},
    {"type":"function","function":{"name":"now","parameters":{"type":"object","properties":{}}}}
  ])");
  f.tool_choice = choice;
  f.parallel_tool_calls = parallel;
  return f;
}

struct Case {
  const char* format;
  const char* valid;     // one call to get_weather
  const char* bad_args;  // the same markup, arguments missing the required city
};

const Case kCases[] = {
    {"hermes",
     "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
     "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"unit\": \"c\"}}\n</tool_call>"},
    {"llama3",
     "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\", \"unit\": \"f\"}}",
     "{\"name\": \"get_weather\", \"parameters\": {}}"},
    {"mistral",
     "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": "
     "\"a1B2c3D4e\"}]",
     "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": 3}, \"id\": "
     "\"a1B2c3D4e\"}]"},
    {"kimi-k2",
     "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
     "<|tool_call_argument_begin|>{\"city\":\"Paris\"}<|tool_call_end|><|tool_calls_section_end|>",
     "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
     "<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>"},
    {"functionary", "<function=get_weather>{\"city\": \"Paris\"}</function>",
     "<function=get_weather>{\"town\": \"Paris\"}</function>"},
    {"gpt-oss",
     "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
     "{\"city\": \"Paris\"}<|call|>",
     "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{}<|call|>"},
    {"qwen3-coder",
     "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
     "<parameter=unit>\nc\n</parameter>\n</function>\n</tool_call>",
     "<tool_call>\n<function=get_weather>\n<parameter=unit>\nc\n</parameter>\n</function>\n"
     "</tool_call>"},
    {"seed-oss",
     "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n"
     "</function>\n</seed:tool_call>",
     "<seed:tool_call>\n<function=get_weather>\n<parameter=unit>k</parameter>\n"
     "<parameter=city>Paris</parameter>\n</function>\n</seed:tool_call>"},
    {"glm",
     "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value>"
     "<arg_key>unit</arg_key><arg_value>f</arg_value></tool_call>",
     "<tool_call>get_weather<arg_key>unit</arg_key><arg_value>f</arg_value></tool_call>"},
    {"hy3",
     "<tool_calls:opensource>\n<tool_call:opensource>get_weather<tool_sep:opensource>\n"
     "<arg_key:opensource>city</arg_key:opensource>\n<arg_value:opensource>Paris"
     "</arg_value:opensource>\n</tool_call:opensource>\n</tool_calls:opensource>",
     "<tool_calls:opensource>\n<tool_call:opensource>get_weather<tool_sep:opensource>\n"
     "</tool_call:opensource>\n</tool_calls:opensource>"},
    {"minimax",
     "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris"
     "</parameter>\n</invoke>\n</minimax:tool_call>",
     "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"town\">Paris"
     "</parameter>\n</invoke>\n</minimax:tool_call>"},
    {"minimax-m3",
     "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">]<]minimax[>[<city>"
     "Paris]<]minimax[>[</city>]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
     "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">]<]minimax[>[<unit>"
     "c]<]minimax[>[</unit>]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>"},
    {"minicpm5", "<function name=\"get_weather\"><param name=\"city\">Paris</param></function>",
     "<function name=\"get_weather\"><param name=\"unit\">Paris</param></function>"},
    {"deepseek",
     "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
     "{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
     "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
     "{\"unit\": \"c\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
    {"firefunction",
     " functools[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]",
     " functools[{\"name\": \"get_weather\", \"arguments\": {\"city\": null}}]"},
    {"minimax-m1",
     "<tool_calls>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": "
     "\"Paris\"}}\n</tool_calls>",
     "<tool_calls>\n{\"name\": \"get_weather\", \"arguments\": {}}\n</tool_calls>"},
    {"apriel",
     "<tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]</tool_calls>",
     "<tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"city\": 1}}]</tool_calls>"},
    {"apertus", "<|tools_prefix|>[{\"get_weather\": {\"city\": \"Paris\"}}]<|tools_suffix|>",
     "<|tools_prefix|>[{\"get_weather\": {\"unit\": \"k\"}}]<|tools_suffix|>"},
    {"gigachat3",
     "<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"get_weather\", \"arguments\": "
     "{\"city\": \"Paris\"}}",
     "<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"get_weather\", \"arguments\": "
     "{\"town\": \"Paris\"}}"},
    {"gigachat3.1",
     "<|function_call|>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}",
     "<|function_call|>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", "
     "\"unit\": \"k\"}}"},
    {"deepseek-v3.2",
     "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter "
     "name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n<｜DSML｜parameter name=\"unit\" "
     "string=\"false\">\"c\"</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
     "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter "
     "name=\"unit\" string=\"false\">\"c\"</｜DSML｜parameter>\n</｜DSML｜invoke>\n"
     "</｜DSML｜function_calls>"},
    {"command-r",
     "<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", "
     "\"parameters\": {\"city\": \"Paris\"}}\n]<|END_ACTION|>",
     "<|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", "
     "\"parameters\": {\"unit\": \"c\"}}\n]<|END_ACTION|>"},
    {"muse-glimmer",
     " to=get_weather<|message|><atem:function_calls>\n<atem:invoke name=\"get_weather\">\n"
     "<atem:parameter name=\"city\">Paris</atem:parameter>\n</atem:invoke>\n"
     "</atem:function_calls>",
     " to=get_weather<|message|><atem:function_calls>\n<atem:invoke name=\"get_weather\">\n"
     "<atem:parameter name=\"unit\">c</atem:parameter>\n</atem:invoke>\n"
     "</atem:function_calls>"},
    {"kimi-k3",
     "The user asks.<|close|>think<|sep|><|open|>response<|sep|><|close|>response<|sep|>"
     "<|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument "
     "key=\"city\" type=\"string\"<|sep|>Paris<|close|>argument<|sep|><|close|>call<|sep|>"
     "<|close|>tools<|sep|>",
     "The user asks.<|close|>think<|sep|><|open|>tools<|sep|><|open|>call tool=\"get_weather\" "
     "index=\"1\"<|sep|><|close|>call<|sep|><|close|>tools<|sep|>"},
    {"gemma4",
     "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,unit:<|\"|>c<|\"|>}<tool_call|>",
     "<|tool_call>call:get_weather{unit:<|\"|>c<|\"|>}<tool_call|>"},
    {"lfm2", "<|tool_call_start|>[get_weather(city='Paris', unit=\"c\")]<|tool_call_end|>",
     "<|tool_call_start|>[get_weather(unit=\"c\")]<|tool_call_end|>"},
};

// Command R+ writes its list after "Action:" in a fence; the same grammar takes it.
TEST(ToolGrammar, CommandRPlusSpelling) {
  auto format = toolcall::make_format("command-r", {});
  auto g =
      grammar::Grammar::parse(forced_call_gbnf(*format, weather_request(ToolChoice::Required), {}));
  const std::string call =
      "Action: ```json\n[\n    {\"tool_name\": \"get_weather\", \"parameters\": {\"city\": "
      "\"Paris\"}}\n]\n```";
  EXPECT_TRUE(grammar::matches(g, call));
  ASSERT_EQ(format->parse(call, true).calls.size(), 1u);
}

// DeepSeek V3.1 writes the name before the separator and no fence; the same grammar takes it.
TEST(ToolGrammar, DeepSeekV31Spelling) {
  auto format = toolcall::make_format("deepseek", {});
  auto g =
      grammar::Grammar::parse(forced_call_gbnf(*format, weather_request(ToolChoice::Required), {}));
  const std::string call =
      "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Paris\"}"
      "<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
  EXPECT_TRUE(grammar::matches(g, call));
  auto parsed = format->parse(call, true);
  ASSERT_EQ(parsed.calls.size(), 1u);
  EXPECT_EQ(parsed.calls[0].name, "get_weather");
}

// Apriel 1.6's prompt leaves the model reasoning: it may finish and open its final response.
TEST(ToolGrammar, AprielReasonsFirstWhenThePromptLeadsIn) {
  toolcall::FormatContext ctx;
  ctx.prompt_tail = "<|begin_assistant|>\nHere are my reasoning steps:\n";
  auto format = toolcall::make_format("apriel", ctx);
  auto g =
      grammar::Grammar::parse(forced_call_gbnf(*format, weather_request(ToolChoice::Required), {}));
  const std::string call =
      "The user wants the weather [in Paris].\n[BEGIN FINAL RESPONSE]\n<tool_calls>[{\"name\": "
      "\"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]</tool_calls>";
  EXPECT_TRUE(grammar::matches(g, call));
  auto parsed = format->parse(call, true);
  ASSERT_EQ(parsed.calls.size(), 1u);
  EXPECT_EQ(parsed.reasoning, "The user wants the weather [in Paris].");
}

TEST(ToolGrammar, EachFormatsValidCallMatchesAndParsesBack) {
  for (const auto& c : kCases) {
    auto format = toolcall::make_format(c.format, {});
    ASSERT_TRUE(format) << c.format;
    toolcall::ReasoningOptions reasoning;
    const std::string gbnf =
        forced_call_gbnf(*format, weather_request(ToolChoice::Required), reasoning);
    ASSERT_FALSE(gbnf.empty()) << c.format;
    auto g = grammar::Grammar::parse(gbnf);
    EXPECT_TRUE(grammar::matches(g, c.valid)) << c.format << "\n" << gbnf;
    EXPECT_FALSE(grammar::matches(g, c.bad_args)) << c.format;
    EXPECT_FALSE(grammar::matches(g, "I will call get_weather.")) << c.format;
    auto parsed = format->parse(c.valid, true);
    ASSERT_EQ(parsed.calls.size(), 1u) << c.format;
    EXPECT_EQ(parsed.calls[0].name, "get_weather");
    EXPECT_EQ(ojson::parse(parsed.calls[0].arguments)["city"], "Paris") << c.format;
  }
}

TEST(ToolGrammar, NamedChoiceAllowsOnlyThatTool) {
  auto format = toolcall::make_format("hermes", {});
  ChatFields req = weather_request(ToolChoice::Named);
  req.tool_choice_name = "now";
  auto g = grammar::Grammar::parse(forced_call_gbnf(*format, req, {}));
  EXPECT_TRUE(
      grammar::matches(g, "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>"));
  EXPECT_FALSE(grammar::matches(
      g,
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"x\"}}\n</tool_call>"));
}

TEST(ToolGrammar, ParallelCallsOnlyWhenAllowed) {
  auto format = toolcall::make_format("hermes", {});
  const std::string one = "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>";
  auto parallel =
      grammar::Grammar::parse(forced_call_gbnf(*format, weather_request(ToolChoice::Required), {}));
  EXPECT_TRUE(grammar::matches(parallel, one + "\n" + one));
  auto single = grammar::Grammar::parse(
      forced_call_gbnf(*format, weather_request(ToolChoice::Required, false), {}));
  EXPECT_TRUE(grammar::matches(single, one));
  EXPECT_FALSE(grammar::matches(single, one + "\n" + one));
}

TEST(ToolGrammar, OpenReasoningBlockClosesBeforeTheCall) {
  auto format = toolcall::make_format("hermes", {});
  toolcall::ReasoningOptions r;
  r.starts_open = true;
  auto g =
      grammar::Grammar::parse(forced_call_gbnf(*format, weather_request(ToolChoice::Required), r));
  const std::string call = "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>";
  EXPECT_TRUE(grammar::matches(g, "Time is asked for.</think>\n\n" + call));
  EXPECT_FALSE(grammar::matches(g, call));
}

TEST(ToolGrammar, UnenforceableParametersFallBackToAnyObject) {
  auto format = toolcall::make_format("hermes", {});
  ChatFields req = weather_request(ToolChoice::Named);
  req.tool_choice_name = "fetch";
  req.tools.push_back(ojson::parse(R"({"type":"function","function":{"name":"fetch","parameters":
      {"type":"object","properties":{"url":{"type":"string","format":"uri"}},"required":["url"]}}})"));
  auto g = grammar::Grammar::parse(forced_call_gbnf(*format, req, {}));
  EXPECT_TRUE(grammar::matches(g,
                               "<tool_call>\n{\"name\": \"fetch\", \"arguments\": {\"url\": "
                               "\"https://a.b\"}}\n</tool_call>"));
}

// tool_choice "auto": from its trigger on, each format's valid call is whole in the grammar
// the triggered constraint starts there.
TEST(ToolGrammar, AutoGrammarTakesTheCallFromItsTrigger) {
  for (const auto& c : kCases) {
    auto format = toolcall::make_format(c.format, {});
    const std::string trigger = format->call_trigger();
    const std::string gbnf = auto_call_gbnf(*format, weather_request(ToolChoice::Auto));
    EXPECT_EQ(trigger.empty(), gbnf.empty()) << c.format;
    if (trigger.empty()) continue;
    const std::string valid = c.valid;
    // Llama 3's bare JSON call may also follow its <|python_tag|>.
    const size_t at = valid.find(trigger);
    const std::string from = at == std::string::npos ? trigger + valid : valid.substr(at);
    EXPECT_TRUE(grammar::matches(grammar::Grammar::parse(gbnf), from)) << c.format;
  }
}

// Every registered format enforces a forced call.
TEST(ToolGrammar, EveryFormatHasACallGrammar) {
  for (const auto& name : toolcall::format_names()) {
    auto format = toolcall::make_format(name, {});
    ASSERT_TRUE(format) << name;
    EXPECT_FALSE(forced_call_gbnf(*format, weather_request(ToolChoice::Required), {}).empty())
        << name;
  }
}

}  // namespace
}  // namespace baton::server
