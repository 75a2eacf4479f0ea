// gpt-oss's harmony format, from hand-written texts shaped like the format's documentation (no
// gpt-oss template is among the golden files).
#include <gtest/gtest.h>

#include "format_check.h"
#include "toolcall/output_format.h"

namespace baton::toolcall {
namespace {

using testing::expect_call;
using testing::parse_streamed;

std::unique_ptr<OutputFormat> harmony_format() {
  return make_format("gpt-oss", {});
}

TEST(HarmonyFormat, AnalysisThenCall) {
  auto f = harmony_format();
  ASSERT_TRUE(f);
  auto out = parse_streamed(
      *f,
      "<|channel|>analysis<|message|>User asks: \"What is the weather in Tokyo?\" We need "
      "get_weather.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather "
      "<|constrain|>json<|message|>{\"location\":\"Tokyo\",\"note\":\"<|x|> ü\"}<|call|>");
  EXPECT_EQ(out.reasoning, "User asks: \"What is the weather in Tokyo?\" We need get_weather.");
  EXPECT_EQ(out.content, "");
  ASSERT_EQ(out.calls.size(), 1u);
  expect_call(out.calls[0], "get_weather", R"({"location": "Tokyo", "note": "<|x|> ü"})");
}

TEST(HarmonyFormat, RecipientBeforeChannelAndTwoCalls) {
  auto f = harmony_format();
  auto out = parse_streamed(
      *f,
      "<|channel|>commentary<|message|>Checking both.<|end|>"
      "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>"
      "{\"city\": \"Paris\"}<|call|><|start|>assistant<|channel|>commentary "
      "to=functions.search_files <|constrain|>json<|message|>{}<|call|>");
  EXPECT_EQ(out.content, "Checking both.");
  ASSERT_EQ(out.calls.size(), 2u);
  expect_call(out.calls[0], "get_weather", R"({"city": "Paris"})");
  expect_call(out.calls[1], "search_files", "{}");
}

TEST(HarmonyFormat, FinalAnswer) {
  auto f = harmony_format();
  auto out = parse_streamed(*f,
                            "<|channel|>analysis<|message|>Easy.<|end|><|start|>assistant"
                            "<|channel|>final<|message|>It is 21 °C in Paris.<|return|>");
  EXPECT_EQ(out.reasoning, "Easy.");
  EXPECT_EQ(out.content, "It is 21 °C in Paris.");
  EXPECT_TRUE(out.calls.empty());
}

TEST(HarmonyFormat, StreamingAndMalformed) {
  auto f = harmony_format();
  auto p = f->parse("<|channel|>final<|message|>Hel<|en", false);
  EXPECT_EQ(p.content, "Hel");
  p = f->parse("<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"c",
               false);
  ASSERT_EQ(p.calls.size(), 1u);
  EXPECT_TRUE(p.last_call_open);
  EXPECT_EQ(p.calls[0].arguments, "{\"c");
  std::string bad =
      "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{oops<|call|>";
  auto out = f->parse(bad, true);
  EXPECT_TRUE(out.calls.empty());
  EXPECT_EQ(out.content, bad);
  // Generation stopped at <|call|> without showing it: the whole object is still a call.
  out = f->parse("<|channel|>commentary to=functions.get_weather<|message|>{\"a\": 1}", true);
  ASSERT_EQ(out.calls.size(), 1u);
  expect_call(out.calls[0], "get_weather", R"({"a": 1})");
}

}  // namespace
}  // namespace baton::toolcall
