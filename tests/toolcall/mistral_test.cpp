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

std::unique_ptr<OutputFormat> mistral() {
  return make_format("mistral", {});
}

TEST(Mistral, NemoArrayKeepsTheModelsIds) {
  expect_parses(
      *mistral(),
      "Let me see.[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {\"s\": \"[ARGS]\\u00e9\"}, "
      "\"id\": \"abcDEF123\"}, {\"name\": \"b\", \"arguments\": {}, \"id\": \"zzzZZZ999\"}]",
      output("Let me see.",
             {call("a", R"({"s": "[ARGS]\u00e9"})", "abcDEF123"), call("b", "{}", "zzzZZZ999")}));
}

TEST(Mistral, NemoWithoutIds) {
  expect_parses(*mistral(), "[TOOL_CALLS] [{\"name\": \"a\", \"arguments\": {\"x\": 1}}]",
                output("", {call("a", R"({"x": 1})")}));
}

TEST(Mistral, NamedCalls) {
  expect_parses(*mistral(),
                "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Z\xC3\xBCrich\"}[TOOL_CALLS]search_files"
                "[ARGS]{\"pattern\": \"a\\\"b\"}",
                output("", {call("get_weather", "{\"city\": \"Z\xC3\xBCrich\"}"),
                            call("search_files", R"({"pattern": "a\"b"})")}));
}

TEST(Mistral, NamedCallWithCallId) {
  expect_parses(*mistral(), "ok [TOOL_CALLS]f[CALL_ID]a1B2c3D4e[ARGS]{\"n\": 2} done",
                output("okdone", {call("f", R"({"n": 2})", "a1B2c3D4e")}));
}

TEST(Mistral, ThinkBlockIsReasoning) {
  expect_parses(*mistral(), "[THINK]Need the weather.[/THINK]\n[TOOL_CALLS]f[ARGS]{}",
                output("", {call("f", "{}")}, "Need the weather."));
  expect_parses(*mistral(), "[THINK]only thinking", output("", {}, "only thinking"));
}

TEST(Mistral, MalformedIsContent) {
  testing::CheckOptions raw{.markup_is_content = true};
  expect_parses(*mistral(), "[TOOL_CALLS]bad name[ARGS]{}", output("[TOOL_CALLS]bad name[ARGS]{}"),
                raw);
  expect_parses(*mistral(), "x[TOOL_CALLS][{\"nam\": 1}]", output("x[TOOL_CALLS][{\"nam\": 1}]"),
                raw);
}

TEST(Mistral, RoundTripNemo) {
  expect_round_trip("mistralai-Mistral-Nemo-Instruct-2407.json", "mistral", weather_calls(true));
}
TEST(Mistral, RoundTripDevstral) {
  expect_round_trip("unsloth-mistral-Devstral-Small-2507.json", "mistral", weather_calls(true));
}
TEST(Mistral, RoundTripMinistral) {
  expect_round_trip("mistralai-Ministral-3-14B-Reasoning-2512.json", "mistral",
                    weather_calls(true));
}

}  // namespace
}  // namespace baton::toolcall
