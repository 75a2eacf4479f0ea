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

std::unique_ptr<OutputFormat> llama3() {
  return make_format("llama3", {});
}

TEST(Llama3, PlainContentAndJsonInProse) {
  expect_parses(*llama3(), "The answer is {\"a\": 1}.", output("The answer is {\"a\": 1}."));
}

TEST(Llama3, OneCall) {
  expect_parses(*llama3(), "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}",
                output("", {call("get_weather", R"({"city": "Paris"})")}));
}

TEST(Llama3, PythonTagAfterContentAndSeveralCalls) {
  expect_parses(
      *llama3(),
      "Checking.<|python_tag|>{\"name\": \"a\", \"parameters\": {\"q\": \"\xC3\xA9\\u00e9\\\"\"}}; "
      "{\"name\": \"b\", \"arguments\": {}}",
      output("Checking.", {call("a", "{\"q\": \"\xC3\xA9\\u00e9\\\"\"}"), call("b", "{}")}));
}

TEST(Llama3, ParallelCallsOnLines) {
  expect_parses(*llama3(),
                "{\"name\": \"a\", \"parameters\": {\"n\": 1}}\n{\"name\": \"b\", \"parameters\": "
                "{\"n\": [2]}}",
                output("", {call("a", R"({"n": 1})"), call("b", R"({"n": [2]})")}));
}

TEST(Llama3, JsonThatIsNotACallIsContent) {
  testing::CheckOptions raw{.markup_is_content = true};
  expect_parses(*llama3(), "{\"answer\": 42}", output("{\"answer\": 42}"), raw);
  // Streaming showed the call once its name was complete; only the final parse rejects it.
  std::string bad = "{\"name\": \"f\", \"parameters\": {\"a\": }}";
  EXPECT_EQ(llama3()->parse(bad, true).content, bad);
  testing::expect_monotonic(*llama3(), bad, raw);
  EXPECT_EQ(llama3()->parse("<|python_tag|>{\"name\": \"f\", \"parame", true).content,
            "<|python_tag|>{\"name\": \"f\", \"parame");
}

TEST(Llama3, RoundTrip31) {
  expect_round_trip("meta-llama-Llama-3.1-8B-Instruct.json", "llama3", weather_calls(false));
}
TEST(Llama3, RoundTrip32) {
  expect_round_trip("meta-llama-Llama-3.2-3B-Instruct.json", "llama3", weather_calls(false));
}
TEST(Llama3, RoundTrip33) {
  expect_round_trip("meta-llama-Llama-3.3-70B-Instruct.json", "llama3", weather_calls(false));
}

std::unique_ptr<OutputFormat> firefunction() {
  return make_format("firefunction", {});
}

TEST(Firefunction, ContentThenCalls) {
  expect_parses(*firefunction(),
                "Sure. functools[{\"name\": \"a\", \"arguments\": {\"x\": \"functools[\"}}, "
                "{\"name\": \"b\", \"arguments\": {}}]",
                output("Sure.", {call("a", R"({"x": "functools["})"), call("b", "{}")}));
  expect_parses(*firefunction(), "no calls, func tools", output("no calls, func tools"));
}

TEST(Firefunction, MalformedIsContent) {
  expect_parses(*firefunction(), " functools[{\"name\": 1}]", output(" functools[{\"name\": 1}]"),
                {.markup_is_content = true});
}

TEST(Firefunction, RoundTrip) {
  testing::RoundTripOptions o;
  o.extra_context = {{"functions", "[]"}, {"datetime", "2024-07-26"}};
  o.end_markers = {"<|start_header_id|>assistant<|end_header_id|>"};
  expect_round_trip("fireworks-ai-llama-3-firefunction-v2.json", "firefunction",
                    weather_calls(true), o);
}

}  // namespace
}  // namespace baton::toolcall
