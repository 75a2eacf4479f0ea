// Muse Glimmer's ATEM messages (muse_format.h): hand-written texts through every check of
// format_check.h, and round trips through its golden chat template.
#include <gtest/gtest.h>

#include "format_check.h"
#include "toolcall/output_format.h"

namespace baton::toolcall {
namespace {

using testing::call;
using testing::expect_parses;
using testing::expect_round_trip;
using testing::output;
using testing::RoundTripOptions;
using testing::weather_calls;

std::unique_ptr<OutputFormat> muse_format() {
  return testing::make_with_tools("muse-glimmer", testing::weather_tool());
}

std::string atem_call(std::string_view name, std::string_view params) {
  return " to=" + std::string(name) + "<|message|><atem:function_calls>\n<atem:invoke name=\"" +
         std::string(name) + "\">\n" + std::string(params) +
         "</atem:invoke>\n</atem:function_calls>";
}

TEST(MuseFormat, ReasoningThenTwoCalls) {
  auto f = muse_format();
  std::string text =
      " to=self<|message|>Need the weather.<|eom|><|start|>assistant" +
      atem_call("get_weather",
                "<atem:parameter name=\"city\">Paris</atem:parameter>\n"
                "<atem:parameter name=\"days\">3</atem:parameter>\n") +
      "<|eom|><|start|>assistant" +
      atem_call("search_files", "<atem:parameter name=\"pattern\">a\"b\nc</atem:parameter>\n") +
      "<|eom|>";
  expect_parses(*f, text,
                output("",
                       {call("get_weather", R"({"city": "Paris", "days": 3})"),
                        call("search_files", R"({"pattern": "a\"b\nc"})")},
                       "Need the weather."));
}

TEST(MuseFormat, ContentMessages) {
  auto f = muse_format();
  expect_parses(*f, " to=user<|message|>It is sunny.<|eot|>", output("It is sunny."));
  expect_parses(*f, "Plain answer.", output("Plain answer."));
  auto p = f->parse(" to=user<|message|>Sunny<|eo", false);
  EXPECT_EQ(p.content, "Sunny");
  p = f->parse(
      " to=get_weather<|message|><atem:function_calls>\n<atem:invoke name=\"get_weather\">"
      "\n<atem:parameter name=\"city\">Par",
      false);
  ASSERT_EQ(p.calls.size(), 1u);
  EXPECT_EQ(p.calls[0].arguments, R"({"city": "Par)");
}

TEST(MuseFormat, MalformedCallsAreContent) {
  auto f = muse_format();
  for (std::string text : {" to=f<|message|>not atem<|eom|>",
                           " to=f<|message|><atem:function_calls>\n<atem:invoke name=\"f\">\n"
                           "<atem:parameter name=\"a\">x</atem:invoke><|eom|>"}) {
    ParsedOutput p = f->parse(text, true);
    EXPECT_EQ(p.content, text);
    EXPECT_TRUE(p.calls.empty()) << text;
    testing::expect_monotonic(*f, text, {.markup_is_content = true});
  }
}

// A <|start|> that opens no assistant message (another role, or text after it) used to leave
// the parse where it was, forever; a header shorter than "to=" threw out_of_range. Every
// parse now ends, and the marker never shows.
TEST(MuseFormat, StartOfAnotherRoleEnds) {
  auto f = muse_format();
  for (const std::string text :
       {"<|start|>", "<|start|>user<|message|>hi<|eot|>", "a<|eom|><|start|>x",
        "<|start|><|start|>", "<|message|>hi", "t<|message|>hi", " to<|message|>hi<|eot|>"}) {
    for (bool final : {false, true}) {
      ParsedOutput out = f->parse(text, final);
      EXPECT_EQ(out.content.find("<|start|>"), std::string::npos) << text;
      EXPECT_TRUE(out.calls.empty()) << text;
    }
  }
}

TEST(MuseFormat, RoundTrips) {
  RoundTripOptions o;
  o.end_markers = {"<|eot|>", "<|eom|>"};
  expect_round_trip("muse-glimmer.json", "muse-glimmer", weather_calls(false), o);
  expect_round_trip("muse-glimmer.json", "muse-glimmer", weather_calls(true), o);
}

}  // namespace
}  // namespace baton::toolcall
