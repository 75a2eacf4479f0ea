#include <gtest/gtest.h>

#include "format_check.h"
#include "toolcall/output_format.h"

namespace baton::toolcall {
namespace {

using testing::call;
using testing::expect_parses;
using testing::expect_round_trip;
using testing::output;
using testing::weather_calls;

std::unique_ptr<OutputFormat> deepseek() {
  return make_format("deepseek", {});
}

const std::string kBegin = "<｜tool▁calls▁begin｜>";
const std::string kEnd = "<｜tool▁calls▁end｜>";
const std::string kCall = "<｜tool▁call▁begin｜>";
const std::string kCallEnd = "<｜tool▁call▁end｜>";
const std::string kSep = "<｜tool▁sep｜>";

TEST(DeepSeek, FencedCalls) {
  expect_parses(
      *deepseek(),
      "Let me check." + kBegin + kCall + "function" + kSep + "get_weather\n```json\n" +
          "{\"city\": \"Paris ✓\"}\n```" + kCallEnd + "\n" + kCall + "function" + kSep +
          "b\n```json\n{}\n```" + kCallEnd + kEnd,
      output("Let me check.", {call("get_weather", R"({"city": "Paris ✓"})"), call("b", "{}")}));
}

TEST(DeepSeek, V31Calls) {
  expect_parses(*deepseek(),
                kBegin + kCall + "f" + kSep + "{\"q\": \"a\\\"b\"}" + kCallEnd + kEnd + " after",
                output("after", {call("f", R"({"q": "a\"b"})")}));
}

TEST(DeepSeek, MalformedIsContent) {
  std::string bad =
      kBegin + kCall + "function" + kSep + "f\n```json\n{\"a\": nope}\n```" + kCallEnd + kEnd;
  EXPECT_EQ(deepseek()->parse(bad, true).content, bad);
  EXPECT_TRUE(deepseek()->parse(bad, true).calls.empty());
  testing::expect_monotonic(*deepseek(), bad, {.markup_is_content = true});
  std::string no_sep = kBegin + kCall + "function f\n" + kCallEnd + kEnd;
  expect_parses(*deepseek(), no_sep, output(no_sep), {.markup_is_content = true});
}

TEST(DeepSeek, RoundTripLlamaCppR1) {
  // Its tools preamble pipes a generator into tojson, which Jinja2 cannot serialise.
  testing::RoundTripOptions o;
  o.with_tools = false;
  expect_round_trip("llama-cpp-deepseek-r1.json", "deepseek", weather_calls(true), o);
}
TEST(DeepSeek, RoundTripR1DistillQwen) {
  testing::RoundTripOptions o;
  o.end_markers = {"<｜Assistant｜>"};
  expect_round_trip("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.json", "deepseek",
                    weather_calls(true), o);
}

}  // namespace
}  // namespace baton::toolcall

namespace baton::toolcall {
namespace {

std::unique_ptr<OutputFormat> dsml() {
  return make_format("deepseek-v3.2", {});
}

TEST(DeepSeekDsml, CallsWithStringAndJsonParameters) {
  std::string text =
      "Checking.\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n"
      "<｜DSML｜parameter name=\"city\" string=\"true\">Z\xC3\xBCrich \"old\" "
      "town</｜DSML｜parameter>\n"
      "<｜DSML｜parameter name=\"days\" string=\"false\">[1, 2]</｜DSML｜parameter>\n"
      "</｜DSML｜invoke>\n<｜DSML｜invoke "
      "name=\"b\">\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";
  testing::expect_parses(
      *dsml(), text,
      testing::output(
          "Checking.",
          {testing::call("get_weather",
                         "{\"city\": \"Z\xC3\xBCrich \\\"old\\\" town\", \"days\": [1, 2]}"),
           testing::call("b", "{}")}));
}

TEST(DeepSeekDsml, V4ToolCallsAndMalformed) {
  testing::expect_parses(*dsml(),
                         "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter "
                         "name=\"n\" string=\"false\">5</｜DSML｜parameter>\n</｜DSML｜invoke>\n"
                         "</｜DSML｜tool_calls>",
                         testing::output("", {testing::call("f", R"({"n": 5})")}));
  std::string bad = "<｜DSML｜tool_calls>\n<｜DSML｜oops>";
  testing::expect_parses(*dsml(), bad, testing::output(bad), {.markup_is_content = true});
}

TEST(DeepSeekDsml, RoundTripV32) {
  testing::expect_round_trip("deepseek-ai-DeepSeek-V3.2.json", "deepseek-v3.2",
                             testing::weather_calls(true));
}
TEST(DeepSeekDsml, RoundTripV4) {
  testing::expect_round_trip("deepseek-ai-DeepSeek-V4.json", "deepseek-v3.2",
                             testing::weather_calls(true));
}
TEST(DeepSeekDsml, RoundTripV4Flash) {
  testing::expect_round_trip("deepseek-ai-DeepSeek-V4-Flash-0731.json", "deepseek-v3.2",
                             testing::weather_calls(true));
}

}  // namespace
}  // namespace baton::toolcall
