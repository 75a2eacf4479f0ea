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
