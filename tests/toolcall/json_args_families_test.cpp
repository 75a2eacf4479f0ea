// The families whose calls carry a JSON object after a header (JsonArgsFormat): Kimi K2,
// Functionary v3.1, Solar Open.
#include <gtest/gtest.h>

#include "format_check.h"
#include "toolcall/output_format.h"

namespace baton::toolcall {
namespace {

using testing::expect_call;
using testing::parse_streamed;
using testing::round_trip;

std::unique_ptr<OutputFormat> json_args_format(std::string_view name) {
  return testing::make_with_tools(name, testing::round_trip_tools());
}

TEST(KimiK2Format, SectionOfCalls) {
  auto f = json_args_format("kimi-k2");
  auto out = parse_streamed(
      *f,
      "Let me see.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
      "<|tool_call_argument_begin|>{\"city\": \"Kraków\", \"days\": 2}<|tool_call_end|>"
      "<|tool_call_begin|>functions.search_files:1<|tool_call_argument_begin|>"
      "{\"pattern\": \"}<|tool_call_end|>\\\"\"}<|tool_call_end|><|tool_calls_section_end|>");
  EXPECT_EQ(out.content, "Let me see.");
  ASSERT_EQ(out.calls.size(), 2u);
  expect_call(out.calls[0], "get_weather", R"({"city": "Kraków", "days": 2})");
  EXPECT_EQ(out.calls[0].id, "functions.get_weather:0");
  expect_call(out.calls[1], "search_files", R"({"pattern": "}<|tool_call_end|>\""})");
  EXPECT_EQ(out.calls[1].id, "functions.search_files:1");
}

TEST(KimiK2Format, StreamsArgumentsAndRejectsBadJson) {
  auto f = json_args_format("kimi-k2");
  auto p = f->parse(
      "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
      "<|tool_call_argument_begin|>{\"city\": \"Par",
      false);
  ASSERT_EQ(p.calls.size(), 1u);
  EXPECT_TRUE(p.last_call_open);
  EXPECT_EQ(p.calls[0].arguments, "{\"city\": \"Par");
  std::string bad =
      "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
      "<|tool_call_argument_begin|>{\"city\": Paris}<|tool_call_end|><|tool_calls_section_end|>";
  auto out = f->parse(bad, true);
  EXPECT_TRUE(out.calls.empty());
  EXPECT_EQ(out.content, bad);
}

TEST(KimiK2Format, RoundTrip) {
  auto f = json_args_format("kimi-k2");
  round_trip(*f, {"moonshotai-Kimi-K2.json", {"<|im_end|>"}});
}

TEST(FunctionaryFormat, CallsAndContent) {
  auto f = json_args_format("functionary");
  auto out = parse_streamed(*f,
                            "Checking 🌦<function=get_weather>{\"city\": \"Lyon\"}</function>"
                            "<function=search_files>{\"pattern\": \"<function=x>\"}</function>");
  EXPECT_EQ(out.content, "Checking 🌦");
  ASSERT_EQ(out.calls.size(), 2u);
  expect_call(out.calls[0], "get_weather", R"({"city": "Lyon"})");
  expect_call(out.calls[1], "search_files", R"({"pattern": "<function=x>"})");
  // Prose that looks like the opener stays content; a call without its close is content at the
  // end.
  out = parse_streamed(*f, "Write <function=name> here.");
  EXPECT_TRUE(out.calls.empty());
  EXPECT_EQ(out.content, "Write <function=name> here.");
  out = f->parse("<function=get_weather>{\"city\": \"Lyon\"}", true);
  EXPECT_TRUE(out.calls.empty());
  EXPECT_EQ(out.content, "<function=get_weather>{\"city\": \"Lyon\"}");
}

TEST(FunctionaryFormat, RoundTrip) {
  auto f = json_args_format("functionary");
  round_trip(*f, {"meetkai-functionary-medium-v3.1.json", {"<|eom_id|>", "<|eot_id|>"}});
}

TEST(SolarOpenFormat, RoundTrip) {
  auto f = json_args_format("solar-open");
  auto out = parse_streamed(*f,
                            "<|tool_calls|><|tool_call:begin|>c1<|tool_call:name|>get_weather"
                            "<|tool_call:args|>{}<|tool_call:end|><|calls|>");
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(out.calls[0].id, "c1");
  expect_call(out.calls[0], "get_weather", "{}");
  round_trip(*f, {"upstage-Solar-Open-100B.json", {"<|end|>", "<|begin|>"}});
}

}  // namespace
}  // namespace baton::toolcall
