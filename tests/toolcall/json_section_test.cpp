// The JSON-section families (json_section_format.h): MiniMax-M1, Apertus, GigaChat 3 and 3.1,
// each by hand-written text and through its golden template.
#include <gtest/gtest.h>

#include "format_check.h"
#include "toolcall/output_format.h"

namespace baton::toolcall {
namespace {

using testing::call;
using testing::CheckOptions;
using testing::expect_parses;
using testing::expect_round_trip;
using testing::output;
using testing::weather_calls;

const CheckOptions kMalformed{.markup_is_content = true};

testing::RoundTripOptions ending_with(std::string marker, std::string content = "") {
  testing::RoundTripOptions o;
  o.content = std::move(content);
  o.end_markers = {std::move(marker)};
  return o;
}

// A call that streaming showed before its section turned out malformed: only the final parse
// can reject it, so the streamed deltas are not compared.
void expect_final_content(const OutputFormat& f, std::string_view text) {
  ParsedOutput p = f.parse(text, true);
  EXPECT_EQ(p.content, text);
  EXPECT_TRUE(p.calls.empty());
  testing::expect_monotonic(f, text, kMalformed);
}

std::unique_ptr<OutputFormat> format(std::string_view name) {
  auto f = make_format(name, {});
  EXPECT_TRUE(f) << name;
  return f;
}

TEST(JsonSections, MarkerSplitAcrossPiecesIsHeldBack) {
  auto m = format("minimax-m1");
  EXPECT_EQ(m->parse("Hi <tool_ca", false).content, "Hi");
  EXPECT_EQ(m->parse("Hi <tool_ca", true).content, "Hi <tool_ca");
  EXPECT_EQ(m->parse("Hi <tool_cx", false).content, "Hi <tool_cx");
  auto g = format("gigachat3.1");
  EXPECT_EQ(g->parse("Ok<|function_c", false).content, "Ok");
  EXPECT_EQ(g->parse("Ok<|message_s", false).content, "Ok");
  auto a = format("apertus");
  EXPECT_EQ(a->parse("<|inner_pre", false).reasoning, "");
  EXPECT_EQ(a->parse("<|inner_prefix|>Hm<|inner_suf", false).reasoning, "Hm");
  // A call appears once its name is whole; its arguments stream.
  auto p = m->parse("<tool_calls>\n{\"name\": \"get_wea", false);
  EXPECT_TRUE(p.calls.empty());
  p = m->parse("<tool_calls>\n{\"name\": \"f\", \"arguments\": {\"a\": \"x", false);
  ASSERT_EQ(p.calls.size(), 1u);
  EXPECT_TRUE(p.last_call_open);
  EXPECT_EQ(p.calls[0].arguments, R"({"a": "x)");
}

// ---- MiniMax-M1 -------------------------------------------------------------------------------

TEST(MinimaxM1, ContentOnly) {
  expect_parses(*format("minimax-m1"), "Hello <tool_call> and tool_calls",
                output("Hello <tool_call> and tool_calls"));
}

TEST(MinimaxM1, ContentAroundSeveralCalls) {
  expect_parses(*format("minimax-m1"),
                "Let me check.\n<tool_calls>\n{\"name\": \"get_weather\", \"arguments\": "
                "{\"city\": \"Paris\"}}\n{\"name\": \"search_files\", \"arguments\": "
                "{\"pattern\": \"a}b\"}}\n</tool_calls>\nDone.",
                output("Let me check.Done.", {call("get_weather", R"({"city": "Paris"})"),
                                              call("search_files", R"({"pattern": "a}b"})")}));
}

TEST(MinimaxM1, ArgumentsAsAStringAndNoCloseAtTheEnd) {
  expect_parses(*format("minimax-m1"),
                "<tool_calls>\n{\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}\n",
                output("", {call("f", R"({"a": 1})")}));
}

TEST(MinimaxM1, MalformedSectionIsContent) {
  expect_parses(*format("minimax-m1"), "<tool_calls>\n{\"nome\": \"f\"}\n</tool_calls> after",
                output("<tool_calls>\n{\"nome\": \"f\"}\n</tool_calls> after"), kMalformed);
  expect_final_content(*format("minimax-m1"),
                       "x <tool_calls>\n{\"name\": \"f\", \"arguments\": {}}\njunk</tool_calls>");
}

TEST(MinimaxM1, RoundTrip) {
  // The template renders an assistant turn with calls without its content.
  auto o = ending_with("<end_of_sentence>");
  expect_round_trip("MiniMax-M1.json", "minimax-m1", weather_calls(true), o);
  expect_round_trip("MiniMax-M1.json", "minimax-m1", weather_calls(false), o);
}

// ---- Apertus ----------------------------------------------------------------------------------

TEST(Apertus, ContentAroundSeveralCalls) {
  expect_parses(*format("apertus"),
                "Let me check.<|tools_prefix|>[{\"get_weather\": {\"city\": \"Paris\"}}, "
                "{\"search_files\": {\"pattern\": \"]<|x\"}}]<|tools_suffix|> Done.",
                output("Let me check.Done.", {call("get_weather", R"({"city": "Paris"})"),
                                              call("search_files", R"({"pattern": "]<|x"})")}));
}

TEST(Apertus, InnerThoughtsAreReasoning) {
  expect_parses(*format("apertus"),
                "<|inner_prefix|>Need the weather.<|inner_suffix|>"
                "<|tools_prefix|>[{\"get_weather\": {}}]<|tools_suffix|>",
                output("", {call("get_weather", "{}")}, "Need the weather."));
  expect_parses(*format("apertus"), "<|inner_prefix|>Still thinking",
                output("", {}, "Still thinking"));
}

TEST(Apertus, MalformedSectionIsContent) {
  expect_parses(*format("apertus"), "<|tools_prefix|>[{\"f\": 3}]<|tools_suffix|> after",
                output("<|tools_prefix|>[{\"f\": 3}]<|tools_suffix|> after"), kMalformed);
  expect_final_content(*format("apertus"), "<|tools_prefix|>[{\"f\": {}, \"g\": {}}]");
}

TEST(Apertus, RoundTrip) {
  auto o = ending_with("<|assistant_end|>", "Let me check.");
  expect_round_trip("Apertus-8B-Instruct.json", "apertus", weather_calls(true), o);
  expect_round_trip("Apertus-8B-Instruct.json", "apertus", weather_calls(false),
                    ending_with("<|assistant_end|>"));
}

// ---- GigaChat 3 -------------------------------------------------------------------------------

TEST(GigaChat3, ContentThenCall) {
  expect_parses(
      *format("gigachat3"),
      "Let me check.<|message_sep|>\n\nfunction call<|role_sep|>\n"
      "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}<|message_sep|>\n\n",
      output("Let me check.", {call("get_weather", R"({"city": "Paris"})")}));
}

TEST(GigaChat3, SeveralCallTurns) {
  expect_parses(*format("gigachat3"),
                "function call<|role_sep|>\n{\"name\": \"a\", \"arguments\": {}}<|message_sep|>\n\n"
                "function call<|role_sep|>\n{\"name\": \"b\", \"arguments\": {\"n\": 1}}",
                output("", {call("a", "{}"), call("b", R"({"n": 1})")}));
}

TEST(GigaChat3, MalformedCallIsContent) {
  expect_parses(*format("gigachat3"), "function call<|role_sep|>\nnot json",
                output("function call<|role_sep|>\nnot json"), kMalformed);
}

TEST(GigaChat3, RoundTrip) {
  // The template renders only an assistant turn's first call.
  auto o = ending_with("<|message_sep|>", "Let me check.");
  expect_round_trip("GigaChat3-10B-A1.8B.json", "gigachat3", weather_calls(false), o);
}

// ---- GigaChat 3.1 -----------------------------------------------------------------------------

TEST(GigaChat31, ContentThenCalls) {
  expect_parses(
      *format("gigachat3.1"),
      "Let me check.<|function_call|>{\"name\": \"get_weather\", \"arguments\": "
      "{\"city\": \"Paris\"}}<|function_call|>{\"name\": \"b\", \"arguments\": {}}"
      "<|message_sep|>",
      output("Let me check.", {call("get_weather", R"({"city": "Paris"})"), call("b", "{}")}));
}

TEST(GigaChat31, MalformedCallIsContent) {
  expect_parses(*format("gigachat3.1"), "Hi <|function_call|>{\"name\": 1}",
                output("Hi <|function_call|>{\"name\": 1}"), kMalformed);
}

TEST(GigaChat31, RoundTrip) {
  auto o = ending_with("<|message_sep|>", "Let me check.");
  expect_round_trip("GigaChat3.1-10B-A1.8B.json", "gigachat3.1", weather_calls(false), o);
  expect_round_trip("GigaChat3.1-10B-A1.8B.json", "gigachat3.1", weather_calls(false),
                    ending_with("<|message_sep|>"));
}

}  // namespace
}  // namespace baton::toolcall
