// Kimi K3 (tagged channels, typed <|open|>argument tags): hand-written texts through every check
// of format_check.h, and round trips through its golden chat template.
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

std::unique_ptr<OutputFormat> kimi_k3_format() {
  return testing::make_with_tools("kimi-k3", testing::weather_tool());
}

std::string arg(std::string_view key, std::string_view type, std::string_view value) {
  std::string t = type.empty() ? "" : " type=\"" + std::string(type) + "\"";
  return "<|open|>argument key=\"" + std::string(key) + "\"" + t + "<|sep|>" + std::string(value) +
         "<|close|>argument<|sep|>";
}

std::string tool_call(std::string_view name, const std::string& args) {
  return "<|open|>call tool=\"" + std::string(name) + "\" index=\"1\"<|sep|>" + args +
         "<|close|>call<|sep|>";
}

std::string tools(const std::string& calls) {
  return "<|open|>tools<|sep|>" + calls + "<|close|>tools<|sep|>";
}

const std::string kThought = "Hmm.<|close|>think<|sep|>";

TEST(KimiK3Format, ContentAroundACall) {
  auto f = kimi_k3_format();
  expect_parses(
      *f,
      kThought + "<|open|>response<|sep|>Let me check.<|close|>response<|sep|>" +
          tools(tool_call("get_weather", arg("city", "string", "Paris") + arg("days", "", "3"))) +
          "Done.<|close|>message<|sep|><|end_of_msg|>",
      output("Let me check.Done.", {call("get_weather", R"({"city": "Paris", "days": 3})")},
             "Hmm."));
}

// With thinking off the template opens the response channel instead of think: the model's text
// is the answer, not reasoning.
TEST(KimiK3Format, PromptThatOpensTheResponseChannel) {
  FormatContext ctx;
  ctx.prompt_tail = "<|open|>assistant<|sep|><|open|>response<|sep|>";
  auto f = make_format("kimi-k3", ctx);
  ASSERT_TRUE(f);
  expect_parses(*f, "Hi there.<|close|>response<|sep|>", output("Hi there."));
  ctx.prompt_tail = "<|open|>think<|sep|>";
  f = make_format("kimi-k3", ctx);
  expect_parses(*f, "Hmm.<|close|>think<|sep|>Hi.", output("Hi.", {}, "Hmm."));
}

TEST(KimiK3Format, TwoCallsTypedByAttribute) {
  auto f = kimi_k3_format();
  expect_parses(
      *f,
      "<|open|>response<|sep|><|close|>response<|sep|>" +
          tools(tool_call("search_files", arg("pattern", "string", "a<b> & \"c\"\n") +
                                              arg("n", "number", "2") +
                                              arg("deep", "boolean", "true") +
                                              arg("opts", "object", R"({"x": [1]})")) +
                tool_call("say&quot;hi", arg("text", "string", "42"))),
      output("",
             {call("search_files",
                   R"({"pattern": "a<b> & \"c\"\n", "n": 2, "deep": true, "opts": {"x": [1]}})"),
              call("say\"hi", R"({"text": "42"})")}));
}

TEST(KimiK3Format, JsonBlockAndNoArguments) {
  auto f = kimi_k3_format();
  expect_parses(*f,
                kThought + tools(tool_call("a",
                                           "<|open|>json type=\"object\"<|sep|>{\"k\": 1}"
                                           "<|close|>json<|sep|>") +
                                 tool_call("b", "")),
                output("", {call("a", R"({"k": 1})"), call("b", "{}")}, "Hmm."));
}

TEST(KimiK3Format, StreamsStringValuesAcrossSplitMarkers) {
  auto f = kimi_k3_format();
  std::string head = kThought + "<|open|>tools<|sep|><|open|>call tool=\"get_weather\"<|sep|>";
  auto p = f->parse(head + "<|open|>argument key=\"city\" type=\"string\"<|sep|>Pa<|clo", false);
  ASSERT_EQ(p.calls.size(), 1u);
  EXPECT_EQ(p.calls[0].arguments, R"({"city": "Pa)");
  EXPECT_TRUE(p.last_call_open);
  p = f->parse(head + "<|open|>argu", false);
  EXPECT_EQ(p.calls[0].arguments, "");
  p = f->parse("Thinking<|close|>thi", false);
  EXPECT_EQ(p.reasoning, "Thinking");
  p = f->parse("<|open|>resp", false);
  EXPECT_EQ(p.content, "");
  EXPECT_EQ(p.reasoning, "");
}

TEST(KimiK3Format, MalformedCallsAreContent) {
  auto f = kimi_k3_format();
  for (const std::string& text : std::vector<std::string>{
           tools("<|open|>call tool=\"f\"<|sep|>" + arg("a", "string", "x")),
           "<|open|>tools<|sep|><|open|>call tool=\"f\"<|sep|><|open|>argument key=\"a\"<|sep|>x",
           tools(tool_call("f", "<|open|>json<|sep|>[1]<|close|>json<|sep|>"))}) {
    std::string whole = "<|open|>response<|sep|>Hi<|close|>response<|sep|>" + text;
    ParsedOutput p = f->parse(whole, true);
    EXPECT_EQ(p.content, "Hi" + text);
    EXPECT_TRUE(p.calls.empty()) << text;
    testing::expect_monotonic(*f, whole, {.markup_is_content = true});
  }
}

TEST(KimiK3Format, RoundTrips) {
  const std::string golden = "Kimi-K3.json";
  RoundTripOptions o;
  o.end_markers = {"<|end_of_msg|>", "<|close|>message<|sep|>"};
  expect_round_trip(golden, "kimi-k3", weather_calls(false), o);
  expect_round_trip(golden, "kimi-k3", weather_calls(true), o);
  std::vector<RoundTripCall> odd = {
      {"search_files", {{"pattern", "a<b & \"c\"\nd"}, {"n", 3}, {"deep", {{"x", true}}}}}};
  expect_round_trip(golden, "kimi-k3", odd, o);
  o.content = "Checking.";
  expect_round_trip(golden, "kimi-k3", weather_calls(true), o);
}

}  // namespace
}  // namespace baton::toolcall
