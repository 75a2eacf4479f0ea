// The XML-like families (XmlCallFormat): hand-written texts, streamed in every split, and round
// trips through the golden chat templates.
#include <gtest/gtest.h>

#include "format_check.h"
#include "toolcall/output_format.h"

namespace baton::toolcall {
namespace {

using testing::expect_call;
using testing::parse_streamed;
using testing::round_trip;

std::unique_ptr<OutputFormat> xml_format(std::string_view name) {
  return testing::make_with_tools(name, testing::round_trip_tools());
}

TEST(Qwen3CoderFormat, ContentThenTwoCalls) {
  auto f = xml_format("qwen3-coder");
  auto out = parse_streamed(*f,
                            "Let me check.\n\n<tool_call>\n<function=get_weather>\n"
                            "<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n"
                            "</parameter>\n</function>\n</tool_call>\n<tool_call>\n"
                            "<function=search_files>\n<parameter=pattern>\na\"b\n\nc\\\n"
                            "</parameter>\n</function>\n</tool_call>");
  EXPECT_EQ(out.content, "Let me check.");
  ASSERT_EQ(out.calls.size(), 2u);
  expect_call(out.calls[0], "get_weather", R"({"city": "Paris", "days": 3})");
  expect_call(out.calls[1], "search_files", R"({"pattern": "a\"b\n\nc\\"})");
  EXPECT_EQ(out.calls[0].id, "");
}

TEST(Qwen3CoderFormat, StreamsStringValuesAndHoldsMarkup) {
  auto f = xml_format("qwen3-coder");
  auto p = f->parse("Hi <tool_call>\n<function=get_weather>\n<parameter=city>\nPar", false);
  EXPECT_EQ(p.content, "Hi");
  ASSERT_EQ(p.calls.size(), 1u);
  EXPECT_TRUE(p.last_call_open);
  EXPECT_EQ(p.calls[0].arguments, R"({"city": "Par)");
  p = f->parse("<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</param", false);
  EXPECT_EQ(p.calls[0].arguments, R"({"city": "Paris)");
  p = f->parse("<tool_call>\n<function=get_weather>\n<parameter=days>\n1", false);
  EXPECT_EQ(p.calls[0].arguments, R"({"days": )");  // a number waits until it is whole
  p = f->parse("Hello <tool_c", false);
  EXPECT_EQ(p.content, "Hello");
  EXPECT_TRUE(p.calls.empty());
  p = f->parse("<tool_call>\n<function=get_wea", false);
  EXPECT_TRUE(p.calls.empty());  // a call appears once its name is whole
}

TEST(Qwen3CoderFormat, TypesFromTheSchema) {
  auto f = xml_format("qwen3-coder");
  auto out = parse_streamed(
      *f,
      "<tool_call>\n<function=get_weather>\n<parameter=city>\n42\n</parameter>\n"
      "<parameter=days>\nthree\n</parameter>\n<parameter=metric>\nTrue\n</parameter>\n"
      "<parameter=where>\n{\"lat\": 1.5}\n</parameter>\n<parameter=extra>\n[1, 2]\n</parameter>\n"
      "<parameter=other>\n7\n</parameter>\n</function>\n</tool_call>");
  ASSERT_EQ(out.calls.size(), 1u);
  expect_call(out.calls[0], "get_weather",
              R"({"city": "42", "days": "three", "metric": true, "where": {"lat": 1.5},
                  "extra": [1, 2], "other": "7"})");
}

TEST(Qwen3CoderFormat, UnicodeAndNoNewlines) {
  auto f = xml_format("qwen3-coder");
  auto out = parse_streamed(*f,
                            "Voilà ✓ <tool_call><function=search_files><parameter=pattern>"
                            "東京\t😀</parameter></function></tool_call>");
  EXPECT_EQ(out.content, "Voilà ✓");
  ASSERT_EQ(out.calls.size(), 1u);
  expect_call(out.calls[0], "search_files", R"({"pattern": "東京\t😀"})");
}

TEST(Qwen3CoderFormat, MalformedCallsBecomeContent) {
  auto f = xml_format("qwen3-coder");
  // Cut off before </function>: raw content once generation ends.
  std::string cut = "Sure.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nPar";
  auto out = f->parse(cut, true);
  EXPECT_TRUE(out.calls.empty());
  EXPECT_EQ(out.content, "Sure.\n" + cut.substr(6));
  // Not a call at all: text, while streaming too.
  out = parse_streamed(*f, "Use <tool_call> tags like <tool_call>this</tool_call>.");
  EXPECT_TRUE(out.calls.empty());
  EXPECT_EQ(out.content, "Use <tool_call> tags like <tool_call>this</tool_call>.");
  // No parameters, then prose after the call.
  out = parse_streamed(*f, "<tool_call>\n<function=get_weather>\n</function>\n</tool_call>\nDone.");
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(out.calls[0].arguments, "{}");
  EXPECT_EQ(out.content, "Done.");
}

TEST(Qwen3CoderFormat, RoundTrips) {
  auto f = xml_format("qwen3-coder");
  round_trip(*f, {"Qwen3-Coder.json", {"<|im_end|>"}});
  round_trip(*f, {"NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.json", {"<|im_end|>"}});
  round_trip(*f, {"StepFun3.5-Flash.json", {"<|im_end|>"}});
}

TEST(SeedOssFormat, CallsAndRoundTrip) {
  auto f = xml_format("seed-oss");
  auto out = parse_streamed(*f,
                            "ok\n<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris"
                            "</parameter>\n</function>\n</seed:tool_call>");
  EXPECT_EQ(out.content, "ok");
  ASSERT_EQ(out.calls.size(), 1u);
  expect_call(out.calls[0], "get_weather", R"({"city": "Paris"})");
  testing::RoundTrip rt{"ByteDance-Seed-OSS.json", {"<seed:eos>"}};
  rt.objects = false;  // the template writes objects with Python's str(), not as JSON
  round_trip(*f, rt);
}

TEST(GlmFormat, CallsAndMalformed) {
  auto f = xml_format("glm");
  auto out = parse_streamed(*f,
                            "Checking.<tool_call>get_weather<arg_key>city</arg_key><arg_value>"
                            "São Paulo\n</arg_value><arg_key>days</arg_key><arg_value>2"
                            "</arg_value></tool_call><tool_call>search_files\n<arg_key>pattern"
                            "</arg_key>\n<arg_value>x</arg_value>\n</tool_call>");
  EXPECT_EQ(out.content, "Checking.");
  ASSERT_EQ(out.calls.size(), 2u);
  expect_call(out.calls[0], "get_weather", R"({"city": "São Paulo\n", "days": 2})");
  expect_call(out.calls[1], "search_files", R"({"pattern": "x"})");
  out = f->parse("<tool_call>get_weather<arg_key>city</arg_key>Paris</tool_call>", true);
  EXPECT_TRUE(out.calls.empty());
  EXPECT_EQ(out.content, "<tool_call>get_weather<arg_key>city</arg_key>Paris</tool_call>");
}

TEST(GlmFormat, RoundTrips) {
  auto f = xml_format("glm");
  round_trip(*f, {"GLM-4.7-Flash.json", {"<|user|>", "<|observation|>"}});
  round_trip(*f, {"poolside-Laguna-S-2.1.json", {"</assistant>"}});
  round_trip(*f, {"poolside-Laguna-XS-2.1.json", {"</assistant>"}});
  round_trip(*f, {"poolside-Laguna-XS.2.json", {"</assistant>"}});
}

TEST(Hy3Format, RoundTrip) {
  auto f = xml_format("hy3");
  round_trip(*f, {"tencent-Hy3.json", {"<｜hy_eos:opensource｜>"}, {"</think:opensource>"}});
}

TEST(MiniMaxFormat, InvokeSection) {
  auto f = xml_format("minimax");
  auto out = parse_streamed(*f,
                            "I'll look.\n<minimax:tool_call>\n<invoke name=\"get_weather\">\n"
                            "<parameter name=\"city\">Paris</parameter>\n<parameter name=\"days\">"
                            "5</parameter>\n</invoke>\n<invoke name=\"search_files\">\n"
                            "<parameter name=\"pattern\">*.md</parameter>\n</invoke>\n"
                            "</minimax:tool_call>");
  EXPECT_EQ(out.content, "I'll look.");
  ASSERT_EQ(out.calls.size(), 2u);
  expect_call(out.calls[0], "get_weather", R"({"city": "Paris", "days": 5})");
  expect_call(out.calls[1], "search_files", R"({"pattern": "*.md"})");
  // A section cut off inside a call is content when generation ends.
  std::string cut = "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=";
  out = f->parse(cut, true);
  EXPECT_TRUE(out.calls.empty());
  EXPECT_EQ(out.content, cut);
}

TEST(MiniMaxM3Format, RoundTrip) {
  auto f = xml_format("minimax-m3");
  testing::RoundTrip rt{"MiniMax-M3.json", {"[e~["}};
  rt.objects = false;  // M3 writes objects as nested elements, read back as text
  round_trip(*f, rt);
}

}  // namespace
}  // namespace baton::toolcall
