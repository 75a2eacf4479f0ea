// Gemma 4 and LFM2 (loose_formats.h): hand-written texts through every check of format_check.h,
// and round trips through their golden chat templates.
#include <gtest/gtest.h>

#include "format_check.h"
#include "toolcall/output_format.h"

namespace baton::toolcall {
namespace {

using testing::call;
using testing::expect_parses;
using testing::expect_round_trip;
using testing::output;
using testing::RoundTripCall;
using testing::RoundTripOptions;
using testing::weather_calls;

std::unique_ptr<OutputFormat> loose_format(std::string_view name) {
  return testing::make_with_tools(name);
}

using testing::expect_malformed;

// Values of every type, as the round trips send them.
std::vector<RoundTripCall> typed_calls() {
  return {{"get_weather",
           {{"city", "Saint-Étienne"},
            {"days", 3},
            {"ratio", -1.5},
            {"metric", true},
            {"alt", nullptr},
            {"where", {{"country", "FR"}, {"tags", {"a", 1, false}}}}}}};
}

TEST(Gemma4Format, ContentAroundCalls) {
  auto f = loose_format("gemma4");
  expect_parses(
      *f,
      "Let me check.\n<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,days:3}"
      "<tool_call|><|tool_call>call:search_files{pattern:<|\"|>a\"b\n\\<|\"|>}"
      "<tool_call|> Done.",
      output("Let me check.Done.", {call("get_weather", R"({"city": "Paris", "days": 3})"),
                                    call("search_files", R"({"pattern": "a\"b\n\\"})")}));
}

TEST(Gemma4Format, TypedAndNestedValues) {
  auto f = loose_format("gemma4");
  expect_parses(*f,
                "<|tool_call>call:f{a:true,b:null,c:-2.5e3,d:{e:[1,<|\"|>x<|\"|>,{}]},"
                "<|\"|>quoted key<|\"|>:[]}<tool_call|>",
                output("", {call("f", R"({"a": true, "b": null, "c": -2.5e3,
                                         "d": {"e": [1, "x", {}]}, "quoted key": []})")}));
  expect_parses(*f, "<|tool_call>call:noargs{}<tool_call|>", output("", {call("noargs", "{}")}));
}

TEST(Gemma4Format, ThoughtChannelIsReasoning) {
  auto f = loose_format("gemma4");
  expect_parses(*f, "<|channel>thought\nThe user wants weather.\n<channel|>It is sunny.",
                output("It is sunny.", {}, "The user wants weather."));
  expect_parses(*f, "<|channel>thought\nstill thinking", output("", {}, "still thinking"));
}

TEST(Gemma4Format, StreamsStringsAndHoldsMarkers) {
  auto f = loose_format("gemma4");
  auto p = f->parse("Hi <|tool_call>call:get_weather{city:<|\"|>Par<|\"", false);
  EXPECT_EQ(p.content, "Hi");
  ASSERT_EQ(p.calls.size(), 1u);
  EXPECT_TRUE(p.last_call_open);
  EXPECT_EQ(p.calls[0].arguments, R"({"city": "Par)");
  p = f->parse("<|tool_call>call:f{days:1", false);
  EXPECT_EQ(p.calls[0].arguments, R"({"days": )");  // the number may go on
  p = f->parse("<|tool_call>call:f{da", false);
  EXPECT_EQ(p.calls[0].arguments, "{");  // so may the key
  p = f->parse("Hello <|tool", false);
  EXPECT_EQ(p.content, "Hello");
  p = f->parse("<|tool_call>call:get_wea", false);
  EXPECT_TRUE(p.calls.empty());  // a call appears once its name is whole
}

TEST(Gemma4Format, MalformedCallsAreContent) {
  auto f = loose_format("gemma4");
  for (std::string text :
       {"<|tool_call>call:f{a:<|\"|>x<|\"|>", "<|tool_call>call:f{a:@}<tool_call|>",
        "<|tool_call>call:f{a:1}", "<|tool_call>nope<tool_call|>"}) {
    expect_malformed(*f, "Hi " + text);
  }
}

TEST(Gemma4Format, RoundTrips) {
  RoundTripOptions o;
  o.end_markers = {"<turn|>"};
  expect_round_trip("google-gemma-4-31B-it-interleaved.json", "gemma4", weather_calls(false), o);
  expect_round_trip("google-gemma-4-31B-it-interleaved.json", "gemma4", weather_calls(true), o);
  expect_round_trip("google-gemma-4-31B-it-interleaved.json", "gemma4", typed_calls(), o);
  o.content = "Checking.";
  expect_round_trip("google-gemma-4-31B-it-interleaved.json", "gemma4", weather_calls(true), o);
}

TEST(PythonicFormat, ContentAroundCalls) {
  auto f = loose_format("lfm2");
  expect_parses(
      *f,
      "Let me check.\n<|tool_call_start|>[get_weather(city='Paris', days=3), "
      "search_files(pattern=\"a\\\"b\\n\", exact=True, limit=None), ping()]<|tool_call_end|>\nOK",
      output("Let me check.OK",
             {call("get_weather", R"({"city": "Paris", "days": 3})"),
              call("search_files", R"({"pattern": "a\"b\n", "exact": true, "limit": null})"),
              call("ping", "{}")}));
}

TEST(PythonicFormat, LiteralsAndEscapes) {
  auto f = loose_format("lfm2");
  // Single-quoted strings are the template's unescaped text: only quotes and backslashes escape.
  expect_parses(*f,
                "<|tool_call_start|>[f(a='it\\'s \\n', b=[1, 'x', {\"k\": [False]}], c=-0.5,)]"
                "<|tool_call_end|>",
                output("", {call("f", R"({"a": "it's \\n", "b": [1, "x", {"k": [false]}],
                                         "c": -0.5})")}));
}

TEST(PythonicFormat, StreamsStrings) {
  auto f = loose_format("lfm2");
  auto p = f->parse("<|tool_call_start|>[get_weather(city='Par", false);
  ASSERT_EQ(p.calls.size(), 1u);
  EXPECT_EQ(p.calls[0].arguments, R"({"city": "Par)");
  EXPECT_TRUE(p.last_call_open);
  p = f->parse("<|tool_call_start|>[get_weather(ci", false);
  EXPECT_EQ(p.calls[0].arguments, "{");
}

TEST(PythonicFormat, MalformedCallsAreContent) {
  auto f = loose_format("lfm2");
  for (std::string text :
       {"<|tool_call_start|>[f('positional')]<|tool_call_end|>",
        "<|tool_call_start|>[f(a=1]<|tool_call_end|>", "<|tool_call_start|>[f(a=1)]",
        "<|tool_call_start|>[f(a=undefined)]<|tool_call_end|>"}) {
    expect_malformed(*f, "Hi " + text);
  }
}

TEST(PythonicFormat, RoundTrips) {
  const std::string golden = "LFM2.5-8B-A1B.json";
  expect_round_trip(golden, "lfm2", weather_calls(false));
  expect_round_trip(golden, "lfm2", weather_calls(true));
  expect_round_trip(golden, "lfm2", typed_calls());
  RoundTripOptions o;
  o.content = "Checking.";
  expect_round_trip(golden, "lfm2", weather_calls(true), o);
}

}  // namespace
}  // namespace baton::toolcall
