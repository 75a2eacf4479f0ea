// expect_round_trip and round_trip (format_check.h): what a model would generate, cut out of a
// real template's rendering of a conversation, must parse back to the calls it was rendered from.
#include <gtest/gtest.h>

#include <fstream>

#include "chat/chat_template.h"
#include "format_check.h"
#include "support/shared_files.h"
#include "toolcall/output_format.h"
#include "toolcall/reasoning_split.h"

namespace baton::toolcall::testing {
namespace {

using nlohmann::ordered_json;

ordered_json weather_tools() {
  return ordered_json::parse(R"([
    {"type": "function", "function": {"name": "get_weather",
      "description": "Get the current weather in a city",
      "parameters": {"type": "object", "properties": {"city": {"type": "string"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "search_files",
      "description": "Search the repository for a pattern",
      "parameters": {"type": "object", "properties": {"pattern": {"type": "string"}},
        "required": ["pattern"]}}}])");
}

ordered_json context(ordered_json messages, bool generation_prompt) {
  return {{"messages", std::move(messages)},
          {"add_generation_prompt", generation_prompt},
          {"bos_token", "<s>"},
          {"eos_token", "</s>"},
          {"tools", weather_tools()}};
}

// Drops trailing whitespace and end-of-turn markers, in any order, from the cut-out text.
std::string strip_end_of_turn(std::string text, const std::vector<std::string>& extra) {
  std::vector<std::string> ends = {
      "<|im_end|>", "<|eot_id|>",      "<|eom_id|>", "</s>",
      "<|end|>",    "<|end_of_text|>", "<sep>",      "<｜end▁of▁sentence｜>"};
  ends.insert(ends.end(), extra.begin(), extra.end());
  for (bool again = true; again;) {
    again = false;
    while (!text.empty() && std::string_view(" \t\r\n").find(text.back()) != std::string::npos) {
      text.pop_back();
      again = true;
    }
    for (const auto& e : ends) {
      if (text.size() >= e.size() && text.compare(text.size() - e.size(), e.size(), e) == 0) {
        text.resize(text.size() - e.size());
        again = true;
      }
    }
  }
  return text;
}

// What the template makes the assistant say for `calls` (OpenAI tool_calls, arguments as
// objects) after `content`: the rendering with the message minus the one with the generation
// prompt, cut at the end of the turn, after any (empty) reasoning block.
std::string render_assistant(const RoundTrip& rt, const std::string& source,
                             const std::string& content, const ordered_json& calls) {
  auto tmpl = chat::ChatTemplate::from_text(source);
  ordered_json ctx = {{"bos_token", "<s>"}, {"eos_token", "</s>"}, {"tools", round_trip_tools()}};
  ctx["messages"] = ordered_json::array({{{"role", "system"}, {"content", "You can call tools."}},
                                         {{"role", "user"}, {"content", "Weather in Paris?"}}});
  ctx["add_generation_prompt"] = true;
  std::string prompt = tmpl.render(ctx);
  ordered_json msg = {{"role", "assistant"}, {"content", content}, {"tool_calls", calls}};
  ctx["messages"].push_back(msg);
  ctx["add_generation_prompt"] = false;
  std::string full = tmpl.render(ctx);
  size_t common = 0;
  while (common < prompt.size() && common < full.size() && prompt[common] == full[common]) ++common;
  // Where the prompt ends inside a tag the message rewrites ("<think>" then "</think>"), the
  // message starts at that tag.
  if (common < prompt.size()) common = std::min(common, full.rfind('<', common));
  std::string said = full.substr(common);
  if (auto at = said.find(rt.starts_after); !rt.starts_after.empty() && at != std::string::npos)
    said = said.substr(at + rt.starts_after.size());
  size_t end = said.size();
  for (const auto& m : rt.end_markers) end = std::min(end, said.find(m));
  said.resize(end);
  for (const auto& t : rt.think_ends) {
    size_t start = said.find_first_not_of(" \n");
    if (start != std::string::npos && said.compare(start, t.size(), t) == 0)
      said = said.substr(start + t.size());
  }
  return said;
}

// Calls in OpenAI form: {"id", "type": "function", "function": {"name", "arguments"}}.
ordered_json openai_calls(const std::vector<std::pair<std::string, std::string>>& calls) {
  auto out = ordered_json::array();
  for (size_t i = 0; i < calls.size(); ++i)
    out.push_back(
        {{"id", "call_" + std::to_string(i + 1)},
         {"type", "function"},
         {"function",
          {{"name", calls[i].first}, {"arguments", ordered_json::parse(calls[i].second)}}}});
  return out;
}

}  // namespace

ordered_json weather_tool() {
  return ordered_json::parse(R"([{"type": "function", "function": {
      "name": "get_weather", "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}}}}}])");
}

std::unique_ptr<OutputFormat> make_with_tools(std::string_view name, ordered_json tools) {
  FormatContext ctx;
  if (!tools.is_null()) ctx.tools = std::move(tools);
  auto f = make_format(name, ctx);
  EXPECT_TRUE(f) << name;
  return f;
}

ordered_json round_trip_tools() {
  return ordered_json::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "description": "Get the weather",
      "parameters": {"type": "object", "properties": {
        "city": {"type": "string", "description": "City"},
        "days": {"type": "integer", "description": "Days"},
        "metric": {"type": "boolean", "description": "Metric"},
        "where": {"type": "object", "description": "Where",
                  "additionalProperties": {"type": "string"}}}, "required": ["city"]}}},
    {"type": "function", "function": {"name": "search_files", "description": "Search",
      "parameters": {"type": "object", "properties": {
        "pattern": {"type": "string", "description": "Pattern"}}, "required": ["pattern"]}}}])");
}

std::string read_source(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return ordered_json::parse(in).at("source").get<std::string>();
}

void round_trip(const OutputFormat& format, const RoundTrip& rt) {
  BATON_REQUIRE_SHARED(path, "chat-templates/" + rt.template_file);
  std::string source = read_source(path);
  struct Case {
    std::string content;
    std::vector<std::pair<std::string, std::string>> calls;
  };
  std::vector<Case> cases = {
      {"Let me check.",
       {{"get_weather", R"({"city": "Paris", "days": 3})"},
        {"search_files", R"({"pattern": "a\"b\nc\\d"})"}}},
      {"",
       {{"get_weather",
         R"({"city": "Zürich 東京", "metric": true, "where": {"lat": 1.5, "tags": ["x"]}})"}}},
  };
  if (!rt.objects) cases[1].calls[0].second = R"({"city": "Zürich 東京", "metric": true})";
  for (const auto& c : cases) {
    std::string said = render_assistant(rt, source, c.content, openai_calls(c.calls));
    SCOPED_TRACE(rt.template_file + " said: " + said);
    ParsedOutput out = parse_streamed(format, said);
    ASSERT_EQ(out.calls.size(), c.calls.size());
    for (size_t i = 0; i < c.calls.size(); ++i)
      expect_call(out.calls[i], c.calls[i].first, c.calls[i].second);
    if (said.find(c.content) != std::string::npos) {
      EXPECT_EQ(out.content, c.content);
    }
  }
}

std::vector<RoundTripCall> weather_calls(bool two) {
  std::vector<RoundTripCall> calls = {
      {"get_weather", {{"city", "Paris"}, {"unit", "celsius"}}, "abcDEF123"}};
  if (two) {
    calls.push_back({"search_files", {{"pattern", "a\"b ✓ \\n"}}, "xyz789QRS"});
  }
  return calls;
}

void expect_round_trip(const std::string& golden_file, std::string_view format_name,
                       const std::vector<RoundTripCall>& calls, const RoundTripOptions& options) {
  if (baton::testing::shared_file("chat-templates").empty())
    GTEST_SKIP() << "needs ../shared/chat-templates (not on this machine; set BATON_SHARED_DIR)";
  auto path = baton::testing::shared_file("chat-templates/" + golden_file);
  ASSERT_FALSE(path.empty()) << "no golden file " << golden_file;
  auto tmpl = chat::ChatTemplate::from_text(read_source(path));

  ordered_json history = ordered_json::array();
  history.push_back({{"role", "user"}, {"content", "Weather in Paris?"}});
  ordered_json tool_calls = ordered_json::array();
  for (const auto& c : calls) {
    tool_calls.push_back({{"id", c.id},
                          {"type", "function"},
                          {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
  }
  ordered_json with_answer = history;
  with_answer.push_back(
      {{"role", "assistant"}, {"content", options.content}, {"tool_calls", tool_calls}});
  auto with_extra = [&](ordered_json c) {
    if (!options.with_tools) c.erase("tools");
    for (const auto& [k, v] : options.extra_context.items()) c[k] = v;
    return c;
  };
  std::string prompt = tmpl.render(with_extra(context(history, true)));
  std::string full = tmpl.render(with_extra(context(with_answer, false)));

  // The history's rendering and the generation prompt agree up to where the model starts; a
  // generation prompt that goes on (with "<think>\n") has the model write its reasoning first.
  size_t common = 0;
  while (common < prompt.size() && common < full.size() && prompt[common] == full[common]) ++common;
  // Markers can share their first bytes ("<think>" and "<tool_call>"): the model's text starts
  // at the marker the agreement ends in.
  size_t open_tag = full.find_last_of("<[", common == 0 ? 0 : common - 1);
  size_t close_tag = full.find_last_of(">]", common == 0 ? 0 : common - 1);
  if (common > 0 && open_tag != std::string::npos &&
      (close_tag == std::string::npos || open_tag > close_tag))
    common = open_tag;
  ReasoningOptions reasoning;
  bool opens = prompt_opens_reasoning(prompt, reasoning);
  std::string generated = strip_end_of_turn(full.substr(common), options.end_markers);
  ParsedOutput expected;
  expected.content = options.content;
  // A prompt that already closed an empty reasoning block ("<think></think>") while the history
  // renders the close marker in the answer: the model does not write it again.
  if (!opens && full.substr(common).starts_with(reasoning.close) &&
      prompt.ends_with(reasoning.close))
    generated = generated.substr(reasoning.close.size());
  if (opens) {
    reasoning.starts_open = true;
    generated = options.reasoning + "\n" + reasoning.close + "\n\n" + generated;
    expected.reasoning = options.reasoning;
  }
  for (const auto& c : calls) {
    bool has_id = generated.find(c.id) != std::string::npos;
    expected.calls.push_back({has_id ? c.id : "", c.name, c.arguments.dump()});
  }
  auto format = make_format(format_name, {});
  ASSERT_TRUE(format) << "no format " << format_name;
  SCOPED_TRACE(golden_file + " generated: " + ordered_json(generated).dump());
  expect_streams(format.get(), reasoning, generated, expected);
  ReasoningSplit split = split_reasoning(generated, reasoning, true);
  expect_monotonic(*format, split.rest);
}

}  // namespace baton::toolcall::testing
