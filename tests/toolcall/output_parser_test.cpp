#include "toolcall/output_parser.h"

#include <gtest/gtest.h>

#include "format_check.h"

namespace baton::toolcall {
namespace {

using testing::call;
using testing::expect_streams;
using testing::output;

ReasoningOptions thinking(bool starts_open = false) {
  ReasoningOptions r;
  r.starts_open = starts_open;
  return r;
}

TEST(OutputParser, ReasoningBlockThenContent) {
  expect_streams(nullptr, thinking(), "<think>\nLet me see.\n</think>\n\nIt is 4.",
                 output("It is 4.", {}, "Let me see."));
  expect_streams(nullptr, thinking(), "\n<think>a < b </thin</think>x",
                 output("x", {}, "a < b </thin"));
}

TEST(OutputParser, PromptOpenedReasoning) {
  expect_streams(nullptr, thinking(true), "Hmm.\n</think>\nDone.", output("Done.", {}, "Hmm."));
  // Never closed: all of it is reasoning.
  expect_streams(nullptr, thinking(true), "Hmm, still thinking",
                 output("", {}, "Hmm, still thinking"));
}

TEST(OutputParser, NoReasoningBlock) {
  expect_streams(nullptr, thinking(), "<thinking is fun", output("<thinking is fun"));
  expect_streams(nullptr, thinking(), "  plain  ", output("  plain  "));
  ReasoningOptions off;
  off.enabled = false;
  expect_streams(nullptr, off, "<think>x</think>y", output("<think>x</think>y"),
                 {.markup_is_content = true});
}

TEST(OutputParser, UnclosedBlockIsReasoning) {
  expect_streams(nullptr, thinking(), "<think>I was cut off", output("", {}, "I was cut off"));
}

TEST(OutputParser, DeltasNeverSplitUtf8) {
  OutputParser p(nullptr, thinking());
  std::string text = "h\xC3\xA9llo \xE2\x9C\x93";
  std::string sum;
  for (char c : text) {
    auto d = p.push(std::string(1, c));
    EXPECT_NE(d.content, "\xC3");
    sum += d.content;
  }
  sum += p.finish().content;
  EXPECT_EQ(sum, text);
}

TEST(OutputParser, PromptOpensReasoning) {
  ReasoningOptions r;
  EXPECT_TRUE(prompt_opens_reasoning("<|im_start|>assistant\n<think>\n", r));
  EXPECT_FALSE(prompt_opens_reasoning("<|im_start|>assistant\n", r));
  EXPECT_FALSE(prompt_opens_reasoning("<think>\n</think>\n\n", r));
}

TEST(OutputParser, CallIdsAreMadeUpOnce) {
  std::string a = make_call_id(), b = make_call_id();
  EXPECT_EQ(a.size(), 29u);
  EXPECT_EQ(a.rfind("call_", 0), 0u);
  EXPECT_NE(a, b);
}

TEST(OutputParser, ACutOffCallStaysAsStreamedAndItsTextFollowsAsContent) {
  OutputParser p(make_format("hermes", {}), thinking());
  auto d1 = p.push("Sure.<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": ");
  ASSERT_EQ(d1.calls.size(), 1u);
  EXPECT_EQ(d1.content, "Sure.");
  auto d2 = p.finish();
  EXPECT_TRUE(d2.calls.empty());
  EXPECT_EQ(d2.content, "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": ");
  EXPECT_EQ(p.result().calls.size(), 1u);
  // Not streamed, the same text is only content.
  ParsedOutput whole =
      OutputParser(make_format("hermes", {}), thinking()).parse_complete("Sure.<tool_call>\n{");
  EXPECT_TRUE(whole.calls.empty());
  EXPECT_EQ(whole.content, "Sure.<tool_call>\n{");
}

TEST(OutputParser, ParseCompleteGivesIds) {
  OutputParser p(make_format("hermes", {}), thinking());
  ParsedOutput o = p.parse_complete(
      "<think>x</think><tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>");
  ASSERT_EQ(o.calls.size(), 1u);
  EXPECT_EQ(o.reasoning, "x");
  EXPECT_EQ(o.calls[0].id.size(), 29u);
}

TEST(FormatRegistry, NamesBuildAndDetect) {
  for (const auto& n : format_names()) {
    auto f = make_format(n, {});
    ASSERT_TRUE(f) << n;
    EXPECT_EQ(f->name(), n);
  }
  EXPECT_EQ(make_format("no-such-format", {}), nullptr);
  EXPECT_EQ(detect_format("{{ messages }}"), "hermes");
}

}  // namespace
}  // namespace baton::toolcall
