// Apriel 1.5 / 1.6 (apriel_format.cpp): plain-text reasoning up to [BEGIN FINAL RESPONSE],
// calls in <tool_calls>[...]</tool_calls>.
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

std::unique_ptr<OutputFormat> apriel() {
  return make_format("apriel", {});
}

TEST(Apriel, LeadLineReasoningThenFinalResponse) {
  expect_parses(*apriel(),
                "Here are my reasoning steps:\nThe user wants 4.\n[BEGIN FINAL RESPONSE]\n"
                "It is 4.\n[END FINAL RESPONSE]",
                output("It is 4.", {}, "The user wants 4."));
}

TEST(Apriel, ReasoningWithoutLeadLine) {
  // Apriel 1.6: the prompt wrote the lead line.
  expect_parses(*apriel(),
                "Check the weather.\n[BEGIN FINAL RESPONSE]\nLet me check.\n"
                "<tool_calls>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}, "
                "{\"name\": \"search_files\", \"arguments\": {\"pattern\": \"]x\"}}]</tool_calls>",
                output("Let me check.",
                       {call("get_weather", R"({"city": "Paris"})"),
                        call("search_files", R"({"pattern": "]x"})")},
                       "Check the weather."));
}

// Apriel 1.6's prompt ends with the lead line: the answer's first words stream as reasoning
// instead of waiting for [BEGIN FINAL RESPONSE].
TEST(Apriel, PromptThatWroteTheLeadLineStreamsReasoningAtOnce) {
  FormatContext ctx;
  ctx.prompt_tail = "<|begin_assistant|>\nHere are my reasoning steps:\n";
  auto f = make_format("apriel", ctx);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->parse("The user wants", false).reasoning, "The user wants");
  EXPECT_EQ(apriel()->parse("The user wants", false).reasoning, "") << "without the prompt: held";
  expect_parses(*f, "The user wants 4.\n[BEGIN FINAL RESPONSE]\nIt is 4.",
                output("It is 4.", {}, "The user wants 4."));
}

TEST(Apriel, CallsRightAfterReasoning) {
  expect_parses(*apriel(),
                "Here are my reasoning steps:\nCall it.\n<tool_calls>[{\"name\": \"f\", "
                "\"arguments\": {}, \"id\": \"call_1\"}]</tool_calls>",
                output("", {call("f", "{}")}, "Call it."));
}

TEST(Apriel, NoReasoning) {
  expect_parses(*apriel(), "Just an answer.", output("Just an answer."));
  expect_parses(*apriel(),
                "Sure.\n<tool_calls>[{\"name\": \"f\", \"arguments\": {\"a\": 1}}]</tool_calls>",
                output("Sure.", {call("f", R"({"a": 1})")}));
}

TEST(Apriel, MalformedCallsAreContent) {
  expect_parses(*apriel(), "Sure.\n<tool_calls>[{\"name\": 1}]</tool_calls> ok",
                output("Sure.\n<tool_calls>[{\"name\": 1}]</tool_calls> ok"),
                {.markup_is_content = true});
  // Streaming showed this call before the junk; only the final parse can reject it.
  std::string junk = "Sure.\n<tool_calls>[{\"name\": \"f\"} x]</tool_calls> ok";
  EXPECT_EQ(apriel()->parse(junk, true).content, junk);
  EXPECT_TRUE(apriel()->parse(junk, true).calls.empty());
}

TEST(Apriel, RoundTrips) {
  for (const char* file : {"unsloth-Apriel-1.5.json", "Apriel-1.6-15b-Thinker-fixed.json"}) {
    SCOPED_TRACE(file);
    testing::RoundTripOptions with_content;
    with_content.content = "Let me check.";
    expect_round_trip(file, "apriel", weather_calls(true), with_content);
    expect_round_trip(file, "apriel", weather_calls(false));
  }
}

}  // namespace
}  // namespace baton::toolcall
