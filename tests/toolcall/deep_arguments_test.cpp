// A model can write 25,000 '[' within max_tokens. Arguments nested deeper than the JSON bound
// (util::kMaxJsonDepth) are never a call's arguments: the call is malformed (content, raw), or,
// where a format turns one value into JSON text, that value stays a string. Nothing a parse
// returns nests deeper than the bound, so the server never copies, dumps or walks more.
#include <gtest/gtest.h>

#include "format_check.h"
#include "toolcall/output_format.h"
#include "util/json_depth.h"

namespace baton::toolcall {
namespace {

constexpr int kHostileDepth = 25000;

std::string nested(int depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

// {"a": [[...]]}: nests depth + 1.
std::string deep_object(int depth = kHostileDepth) {
  return "{\"a\": " + nested(depth) + "}";
}

std::unique_ptr<OutputFormat> deep_format(std::string_view name) {
  FormatContext ctx;
  ctx.tools = testing::round_trip_tools();
  auto f = make_format(name, ctx);
  EXPECT_TRUE(f) << name;
  return f;
}

// The final parse returns the text as content and no call; at the bound the same markup is a
// call whose arguments parse. `levels_around`: the arrays and objects the markup wraps around
// the arguments, where the format parses them together (Command R's list of calls).
void expect_refused_deep(std::string_view name, const std::string& before, const std::string& after,
                         int levels_around = 0) {
  auto f = deep_format(name);
  const std::string text = before + deep_object() + after;
  ParsedOutput out = f->parse(text, true);
  EXPECT_TRUE(out.calls.empty()) << name;
  EXPECT_NE(out.content.find(deep_object()), std::string::npos) << name;
  // A stream's parse of the same text is bounded too.
  ParsedOutput partial = f->parse(text.substr(0, text.size() - after.size() - 1000), false);
  (void)partial;
  out = f->parse(before + deep_object(util::kMaxJsonDepth - 1 - levels_around) + after, true);
  ASSERT_EQ(out.calls.size(), 1u) << name;
  auto args = nlohmann::json::parse(out.calls[0].arguments, nullptr, false);
  EXPECT_TRUE(args.is_object()) << name << ": " << out.calls[0].arguments;
}

TEST(DeepArguments, HermesCall) {
  expect_refused_deep("hermes",
                      "<tool_call>{\"name\": \"get_weather\", \"arguments\": ", "}</tool_call>");
}

TEST(DeepArguments, JsonArgsCall) {
  expect_refused_deep("kimi-k2",
                      "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
                      "<|tool_call_argument_begin|>",
                      "<|tool_call_end|><|tool_calls_section_end|>");
}

TEST(DeepArguments, CommandRList) {
  expect_refused_deep(
      "command-r",
      "<|START_ACTION|>[{\"tool_name\": \"get_weather\", \"parameters\": ", "}]<|END_ACTION|>", 2);
}

TEST(DeepArguments, HarmonyCall) {
  expect_refused_deep("gpt-oss",
                      "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>",
                      "<|call|>");
}

TEST(DeepArguments, KimiK3JsonBlock) {
  expect_refused_deep("kimi-k3",
                      "Hmm.<|close|>think<|sep|><|open|>tools<|sep|><|open|>call "
                      "tool=\"get_weather\" index=\"1\"<|sep|><|open|>json type=\"object\"<|sep|>",
                      "<|close|>json<|sep|><|close|>call<|sep|><|close|>tools<|sep|>");
}

// A parameter of an XML-like call is converted to JSON by itself: too deep, it stays the text
// it was, as a string.
TEST(DeepArguments, XmlParameterStaysAString) {
  auto f = deep_format("qwen3-coder");
  const std::string value = nested(kHostileDepth);
  ParsedOutput out = f->parse("<tool_call>\n<function=get_weather>\n<parameter=where>\n" + value +
                                  "\n</parameter>\n</function>\n</tool_call>",
                              true);
  ASSERT_EQ(out.calls.size(), 1u);
  auto args = nlohmann::json::parse(out.calls[0].arguments, nullptr, false);
  ASSERT_TRUE(args.is_object()) << out.calls[0].arguments.substr(0, 200);
  EXPECT_EQ(args["where"], value);
}

// Every format, fed each of its markers followed by deep JSON in the shapes calls take: no
// crash, and no call whose arguments nest past the bound (one level more for formats that put
// a bounded value under a key).
TEST(DeepArguments, NoFormatReturnsDeeperArguments) {
  const std::string deep = deep_object();
  const std::vector<std::string> payloads = {
      deep,
      nested(kHostileDepth),
      "{\"name\": \"get_weather\", \"arguments\": " + deep + "}",
      "[{\"name\": \"get_weather\", \"arguments\": " + deep + "}]",
      "get_weather(a=" + nested(kHostileDepth) + ")",
      "[get_weather(a=" + nested(kHostileDepth) + ")]",
      "get_weather\n```json\n" + deep + "\n```",
  };
  size_t parses = 0;
  for (const auto& name : format_names()) {
    auto f = deep_format(name);
    ASSERT_TRUE(f) << name;
    std::vector<std::string> openers = f->markers();
    openers.push_back(f->call_trigger());
    openers.push_back("");
    for (const auto& opener : openers) {
      for (const auto& payload : payloads) {
        for (bool final : {false, true}) {
          ParsedOutput out;
          EXPECT_NO_THROW(out = f->parse(opener + payload, final))
              << name << " after '" << opener << "': " << payload.substr(0, 40);
          ++parses;
          if (!final) continue;  // an open call streams its text; the final parse judges it
          for (const auto& c : out.calls) {
            EXPECT_TRUE(util::json_nesting_within(c.arguments, util::kMaxJsonDepth + 1))
                << name << " after '" << opener << "': " << c.arguments.substr(0, 80);
          }
        }
      }
    }
  }
  EXPECT_GT(parses, 100u);
}

}  // namespace
}  // namespace baton::toolcall
