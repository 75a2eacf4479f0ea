#pragma once
// Checks for the registry_b formats: the streaming contract of OutputFormat::parse() over every
// prefix of a text, and round trips through the golden chat templates in ../shared.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_template.h"
#include "support/shared_files.h"
#include "toolcall/output_format.h"

namespace baton::toolcall::testing {

inline bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// `later` extends `earlier` as parse() promises: fields only grow at their end, calls are only
// appended, only the open last call's arguments may grow.
inline void expect_extends(const ParsedOutput& earlier, const ParsedOutput& later,
                           const std::string& where) {
  EXPECT_TRUE(starts_with(later.content, earlier.content))
      << where << "\n  earlier content: " << earlier.content
      << "\n  later content: " << later.content;
  EXPECT_TRUE(starts_with(later.reasoning, earlier.reasoning)) << where;
  ASSERT_LE(earlier.calls.size(), later.calls.size()) << where;
  for (size_t i = 0; i < earlier.calls.size(); ++i) {
    const auto& a = earlier.calls[i];
    const auto& b = later.calls[i];
    EXPECT_EQ(a.name, b.name) << where;
    EXPECT_EQ(a.id, b.id) << where;
    bool open = earlier.last_call_open && i + 1 == earlier.calls.size();
    if (open)
      EXPECT_TRUE(starts_with(b.arguments, a.arguments))
          << where << "\n  earlier args: " << a.arguments << "\n  later args: " << b.arguments;
    else
      EXPECT_EQ(a.arguments, b.arguments) << where;
  }
}

// Parses `text` whole and after each of its prefixes; every streamed parse must be extended by
// the next one and by the final parse. Returns the final parse.
inline ParsedOutput parse_streamed(const OutputFormat& format, std::string_view text) {
  ParsedOutput whole = format.parse(text, true);
  ParsedOutput previous;
  for (size_t i = 0; i <= text.size(); ++i) {
    ParsedOutput p = format.parse(text.substr(0, i), false);
    std::string where = "after " + std::to_string(i) + " bytes: " + std::string(text.substr(0, i));
    expect_extends(previous, p, where);
    expect_extends(p, whole, where + " (vs final)");
    if (::testing::Test::HasFailure()) break;
    previous = std::move(p);
  }
  expect_extends(previous, whole, "final");
  return whole;
}

// Arguments compared as JSON.
inline void expect_call(const ToolCall& call, const std::string& name, const std::string& args) {
  EXPECT_EQ(call.name, name);
  auto parsed = nlohmann::json::parse(call.arguments, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << "arguments are not JSON: " << call.arguments;
  EXPECT_EQ(parsed, nlohmann::json::parse(args)) << call.arguments;
}

// The tools the round trips declare.
inline nlohmann::ordered_json round_trip_tools() {
  return nlohmann::ordered_json::parse(R"([
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

struct RoundTrip {
  std::string template_file;             // under ../shared/chat-templates
  std::vector<std::string> end_markers;  // the assistant's text ends before the first of these
  std::vector<std::string> think_ends = {"</think>", "</mm:think>"};
  bool objects = true;  // whether the template writes object arguments as JSON
  // Where the message is not rendered after the generation prompt (Command R+ ends the prompt
  // with a system turn): the message starts after this marker.
  std::string starts_after = "";
};

// What the template makes the assistant say for `calls` (OpenAI tool_calls, arguments as
// objects) after `content`: the rendering with the message minus the one with the generation
// prompt, cut at the end of the turn, after any (empty) reasoning block.
inline std::string render_assistant(const RoundTrip& rt, const std::string& source,
                                    const std::string& content,
                                    const nlohmann::ordered_json& calls) {
  auto tmpl = chat::ChatTemplate::from_text(source);
  nlohmann::ordered_json ctx = {
      {"bos_token", "<s>"}, {"eos_token", "</s>"}, {"tools", round_trip_tools()}};
  ctx["messages"] =
      nlohmann::ordered_json::array({{{"role", "system"}, {"content", "You can call tools."}},
                                     {{"role", "user"}, {"content", "Weather in Paris?"}}});
  ctx["add_generation_prompt"] = true;
  std::string prompt = tmpl.render(ctx);
  nlohmann::ordered_json msg = {{"role", "assistant"}, {"content", content}, {"tool_calls", calls}};
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

inline std::string read_source(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in).at("source").get<std::string>();
}

// Calls in OpenAI form: {"id", "type": "function", "function": {"name", "arguments"}}.
inline nlohmann::ordered_json openai_calls(
    const std::vector<std::pair<std::string, std::string>>& calls) {
  auto out = nlohmann::ordered_json::array();
  for (size_t i = 0; i < calls.size(); ++i)
    out.push_back({{"id", "call_" + std::to_string(i + 1)},
                   {"type", "function"},
                   {"function",
                    {{"name", calls[i].first},
                     {"arguments", nlohmann::ordered_json::parse(calls[i].second)}}}});
  return out;
}

// Renders two conversations through the template and parses the assistant's text back (whole
// and streamed): the same calls, arguments compared as JSON, and the content around them.
inline void round_trip(const OutputFormat& format, const RoundTrip& rt) {
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

}  // namespace baton::toolcall::testing
