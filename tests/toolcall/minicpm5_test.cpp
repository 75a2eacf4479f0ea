// MiniCPM 5 (an XmlCallFormat spec with CDATA values): hand-written texts through every check of
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
using testing::RoundTripCall;
using testing::RoundTripOptions;
using testing::weather_calls;

std::unique_ptr<OutputFormat> minicpm5_format() {
  return testing::make_with_tools("minicpm5", testing::weather_tool());
}

using testing::expect_malformed;

TEST(MiniCpm5Format, ContentAroundCalls) {
  auto f = minicpm5_format();
  expect_parses(*f,
                "Let me check.\n<function name=\"get_weather\"><param name=\"city\">Paris</param>"
                "<param name=\"days\">3</param></function>\n<function name=\"search_files\">"
                "<param name=\"pattern\"><![CDATA[a<b>&\nc]]></param></function>",
                output("Let me check.", {call("get_weather", R"({"city": "Paris", "days": 3})"),
                                         call("search_files", R"({"pattern": "a<b>&\nc"})")}));
}

TEST(MiniCpm5Format, CdataStreamsAndTypes) {
  auto f = minicpm5_format();
  auto p = f->parse("<function name=\"get_weather\"><param name=\"city\"><![CDATA[Pa]]", false);
  ASSERT_EQ(p.calls.size(), 1u);
  EXPECT_EQ(p.calls[0].arguments, R"({"city": "Pa)");
  p = f->parse("<function name=\"get_weather\"><param name=\"city\"><![CDATA[Pa]]></par", false);
  EXPECT_EQ(p.calls[0].arguments, R"({"city": "Pa)");
  p = f->parse("<function name=\"get_weather\"><param name=\"city\"><!", false);
  EXPECT_EQ(p.calls[0].arguments, R"({"city": )");
  expect_parses(*f,
                "<function name=\"get_weather\"><param name=\"days\"><![CDATA[7]]></param>"
                "</function>",
                output("", {call("get_weather", R"({"days": 7})")}));
}

TEST(MiniCpm5Format, MalformedCallsAreContent) {
  auto f = minicpm5_format();
  for (std::string text :
       {"<function name=\"f\"><param name=\"a\">x</param>",
        "<function name=\"f\"><param name=\"a\"><![CDATA[x]]>y</param></function>",
        "<function name=\"f\"><param name=\"a\"><![CDATA[x</param></function>"}) {
    expect_malformed(*f, "Hi " + text);
  }
}

TEST(MiniCpm5Format, RoundTrips) {
  const std::string golden = "openbmb-MiniCPM5-1B.json";
  expect_round_trip(golden, "minicpm5", weather_calls(false));
  expect_round_trip(golden, "minicpm5", weather_calls(true));
  std::vector<RoundTripCall> cdata = {{"search_files", {{"pattern", "a<b & c\nd]"}}}};
  expect_round_trip(golden, "minicpm5", cdata);
  RoundTripOptions o;
  o.content = "Checking.";
  expect_round_trip(golden, "minicpm5", weather_calls(true), o);
}

}  // namespace
}  // namespace baton::toolcall
