// Cohere Command R family: "Action:" fenced lists (R+) and <|START_ACTION|> lists (R7B, Cohere2).
#include <gtest/gtest.h>

#include "format_check.h"
#include "toolcall/output_format.h"

namespace baton::toolcall {
namespace {

using testing::expect_call;
using testing::parse_streamed;
using testing::round_trip;

std::unique_ptr<OutputFormat> command_r_format() {
  FormatContext ctx;
  ctx.tools = testing::round_trip_tools();
  return make_format("command-r", ctx);
}

TEST(CommandRFormat, ActionFence) {
  auto f = command_r_format();
  ASSERT_TRUE(f);
  auto out =
      parse_streamed(*f,
                     "I will look it up.\nAction: ```json\n[\n  {\"tool_name\": \"get_weather\","
                     " \"parameters\": {\"city\": \"Paris\"}},\n  {\"tool_name\": "
                     "\"search_files\", \"parameters\": {\"pattern\": \"]```\"}}\n]\n```");
  EXPECT_EQ(out.content, "I will look it up.");
  ASSERT_EQ(out.calls.size(), 2u);
  expect_call(out.calls[0], "get_weather", R"({"city": "Paris"})");
  expect_call(out.calls[1], "search_files", R"({"pattern": "]```"})");
  EXPECT_EQ(out.calls[0].id, "");
}

TEST(CommandRFormat, StartActionWithThinkingAndResponse) {
  auto f = command_r_format();
  auto out = parse_streamed(*f,
                            "<|START_THINKING|>Need the weather.<|END_THINKING|><|START_ACTION|>[\n"
                            "    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", "
                            "\"parameters\": {\"city\": \"Zürich\"}}\n]<|END_ACTION|>");
  EXPECT_EQ(out.reasoning, "Need the weather.");
  EXPECT_EQ(out.content, "");
  ASSERT_EQ(out.calls.size(), 1u);
  EXPECT_EQ(out.calls[0].id, "0");
  expect_call(out.calls[0], "get_weather", R"({"city": "Zürich"})");
  out = parse_streamed(*f, "<|START_RESPONSE|>It is sunny.<|END_RESPONSE|>");
  EXPECT_EQ(out.content, "It is sunny.");
  EXPECT_TRUE(out.calls.empty());
}

TEST(CommandRFormat, MalformedListsAreContent) {
  auto f = command_r_format();
  std::string bad = "<|START_ACTION|>[{\"tool_name\": \"get_weather\", \"parameters\": ";
  auto out = f->parse(bad, true);
  EXPECT_TRUE(out.calls.empty());
  EXPECT_EQ(out.content, bad);
  out = parse_streamed(*f, "Action: nothing to do.");
  EXPECT_TRUE(out.calls.empty());
  EXPECT_EQ(out.content, "Action: nothing to do.");
}

TEST(CommandRFormat, RoundTrips) {
  auto f = command_r_format();
  testing::RoundTrip plus{"CohereForAI-c4ai-command-r-plus-tool_use.json",
                          {"<|START_OF_TURN_TOKEN|>", "<|END_OF_TURN_TOKEN|>"}};
  plus.starts_after = "<|CHATBOT_TOKEN|>";
  round_trip(*f, plus);
  round_trip(*f, {"CohereForAI-c4ai-command-r7b-12-2024-tool_use.json", {"<|END_OF_TURN_TOKEN|>"}});
  round_trip(*f, {"Cohere2MoE.json", {"<|END_OF_TURN_TOKEN|>"}});
}

}  // namespace
}  // namespace baton::toolcall
