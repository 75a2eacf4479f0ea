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

std::unique_ptr<OutputFormat> hermes() {
  return make_format("hermes", {});
}

TEST(Hermes, ContentOnly) {
  expect_parses(*hermes(), "Hello <b>world</b>, tool_call!",
                output("Hello <b>world</b>, tool_call!"));
  expect_parses(*hermes(), "", output(""));
}

TEST(Hermes, ContentAroundOneCall) {
  expect_parses(*hermes(),
                "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
                "{\"city\": \"Paris\"}}\n</tool_call>\nDone.",
                output("Let me check.Done.", {call("get_weather", R"({"city": "Paris"})")}));
}

TEST(Hermes, SeveralCalls) {
  expect_parses(*hermes(),
                "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n</tool_call>\n"
                "<tool_call>\n{\"name\": \"b\", \"arguments\": {\"n\": [1, 2.5e1, null]}}\n"
                "</tool_call>",
                output("", {call("a", "{}"), call("b", R"({"n": [1, 2.5e1, null]})")}));
}

TEST(Hermes, UnicodeAndEscapesInArguments) {
  expect_parses(
      *hermes(),
      "<tool_call>{\"name\": \"say\", \"arguments\": {\"t\": \"h\xC3\xA9 \\\"q\\\" "
      "\\u2713 </tool_call> {\\n}\"}}</tool_call>",
      output("", {call("say", "{\"t\": \"h\xC3\xA9 \\\"q\\\" \\u2713 </tool_call> {\\n}\"}")}));
}

TEST(Hermes, ArgumentsAsAStringAndMissingCloseTag) {
  expect_parses(*hermes(), "<tool_call>\n{\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}\n",
                output("", {call("f", R"({"a": 1})")}));
}

TEST(Hermes, MalformedCallIsContent) {
  testing::CheckOptions malformed{.markup_is_content = true};
  expect_parses(*hermes(), "<tool_call>\n{\"nome\": \"f\"}\n</tool_call> after",
                output("<tool_call>\n{\"nome\": \"f\"}\n</tool_call> after"), malformed);
  expect_parses(*hermes(), "x <tool_call>not json</tool_call>",
                output("x <tool_call>not json</tool_call>"), malformed);
  // Streaming showed this call before the junk; only the final parse can reject it.
  std::string junk = "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}} junk";
  EXPECT_EQ(hermes()->parse(junk, true).content, junk);
  EXPECT_TRUE(hermes()->parse(junk, true).calls.empty());
}

TEST(Hermes, MarkerSplitAcrossPiecesIsHeldBack) {
  auto f = hermes();
  EXPECT_EQ(f->parse("Hi <tool_c", false).content, "Hi");
  EXPECT_EQ(f->parse("Hi <tool_c", true).content, "Hi <tool_c");
  EXPECT_EQ(f->parse("Hi <tool_cx", false).content, "Hi <tool_cx");
}

TEST(Hermes, RoundTripQwen25) {
  expect_round_trip("Qwen-Qwen2.5-7B-Instruct.json", "hermes", weather_calls(true));
}
TEST(Hermes, RoundTripQwen3) {
  expect_round_trip("Qwen-Qwen3-0.6B.json", "hermes", weather_calls(true));
}
TEST(Hermes, RoundTripQwQ) {
  expect_round_trip("Qwen-QwQ-32B.json", "hermes", weather_calls(true));
}
TEST(Hermes, RoundTripHermes2Pro) {
  expect_round_trip("NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.json", "hermes",
                    weather_calls(true));
}
TEST(Hermes, RoundTripHermes3) {
  expect_round_trip("NousResearch-Hermes-3-Llama-3.1-8B-tool_use.json", "hermes",
                    weather_calls(true));
}
TEST(Hermes, RoundTripMiMoVL) {
  expect_round_trip("MiMo-VL.json", "hermes", weather_calls(true));
}
TEST(Hermes, RoundTripBielik) {
  expect_round_trip("Bielik-11B-v3.0-Instruct.json", "hermes", weather_calls(true));
}
TEST(Hermes, RoundTripGranite41) {
  expect_round_trip("ibm-granite-granite-4.1.json", "hermes", weather_calls(true));
}
TEST(Hermes, RoundTripRekaEdge) {
  expect_round_trip("Reka-Edge.json", "hermes", weather_calls(true));
}
TEST(Hermes, RoundTripWithContent) {
  testing::RoundTripOptions o;
  o.content = "Let me look that up.";
  expect_round_trip("Qwen-Qwen2.5-7B-Instruct.json", "hermes", weather_calls(false), o);
}

}  // namespace
}  // namespace baton::toolcall
