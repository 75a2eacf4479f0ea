// expect_round_trip (format_check.h): what a model would generate, cut out of a real template's
// rendering of a conversation, must parse back to the calls it was rendered from.
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

}  // namespace

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
  std::ifstream in(path, std::ios::binary);
  auto golden = ordered_json::parse(in);
  auto tmpl = chat::ChatTemplate::from_text(golden.at("source").get<std::string>());

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
