// Forced calls in every format, sampled: random tokens inside each format's call grammar (what
// a random-weight model amounts to once masked), with any max_tokens from the shortest call up
// to 4x it, always end as exactly one call that the format's own parser reads back, to an
// offered tool, with arguments that hold the tool's parameters.
#include <gtest/gtest.h>

#include <random>

#include "grammar/grammar.h"
#include "grammar/token_mask.h"
#include "server/answer/tool_grammar.h"
#include "support/grammar_sampling.h"
#include "toolcall/output_format.h"

namespace baton::server {
namespace {

using ojson = nlohmann::ordered_json;

ChatFields one_forced_call() {
  ChatFields f;
  f.tools = ojson::parse(R"([
    {"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
      "properties":{"city":{"type":"string"},"unit":{"enum":["c","f"]},
                    "days":{"type":"integer","minimum":1,"maximum":7}},"required":["city"]}}},
    {"type":"function","function":{"name":"now","parameters":{"type":"object","properties":{}}}}
  ])");
  f.tool_choice = ToolChoice::Required;
  f.parallel_tool_calls = false;
  return f;
}

// Every byte, the format's markers as tokens of their own, and an end token (the last id).
std::shared_ptr<const grammar::VocabTrie> vocab_for(const toolcall::OutputFormat& format) {
  std::vector<std::string> v;
  for (int b = 0; b < 256; ++b) v.emplace_back(1, static_cast<char>(b));
  for (const std::string& m : format.markers()) v.push_back(m);
  v.emplace_back("");
  const auto eog = static_cast<int32_t>(v.size() - 1);
  return std::make_shared<grammar::VocabTrie>(v, std::vector<int32_t>{eog});
}

// "" when the text is one valid call, else what is wrong with it.
std::string judge(const toolcall::OutputFormat& format, const std::string& text) {
  const auto parsed = format.parse(text, true);
  if (parsed.calls.size() != 1) return std::to_string(parsed.calls.size()) + " calls";
  const auto& call = parsed.calls[0];
  const ojson args = ojson::parse(call.arguments, nullptr, false);
  if (!args.is_object()) return "arguments are not an object: " + call.arguments;
  if (call.name == "now") return args.empty() ? "" : "now takes no arguments: " + call.arguments;
  if (call.name != "get_weather") return "a call to " + call.name;
  if (!args.contains("city") || !args["city"].is_string()) return "no city: " + call.arguments;
  if (args.contains("unit") && args["unit"] != "c" && args["unit"] != "f") {
    return "unit out of its enum: " + call.arguments;
  }
  if (args.contains("days") &&
      !(args["days"].is_number_integer() && args["days"] >= 1 && args["days"] <= 7)) {
    return "days out of range: " + call.arguments;
  }
  return "";
}

TEST(ForcedCallSampling, EveryFormatParsesBackAtEveryBudgetFromTheShortestCallUp) {
  constexpr int kSeeds = 100;
  const ChatFields request = one_forced_call();
  toolcall::FormatContext ctx;  // formats that write values as text type them by the schema
  ctx.tools = request.tools;
  for (const std::string& name : toolcall::format_names()) {
    auto format = toolcall::make_format(name, ctx);
    ASSERT_TRUE(format) << name;
    auto g = grammar::Grammar::parse(forced_call_gbnf(*format, request, {}));
    auto vocab = vocab_for(*format);
    const int32_t shortest = grammar::TokenMatcher(g, vocab).min_tokens_to_end();
    ASSERT_GT(shortest, 0) << name;
    ASSERT_LT(shortest, 400) << name;
    int failed = 0;
    for (int seed = 0; seed < kSeeds; ++seed) {
      std::mt19937 rng(static_cast<uint32_t>(seed));
      const int32_t budget = shortest + seed * 3 * shortest / (kSeeds - 1);
      grammar::TokenMatcher tm(g, vocab);
      tm.limit_tokens(budget);
      const std::string text = baton::testing::sample_in_grammar(tm, *vocab, budget, rng);
      const std::string why = judge(*format, text);
      if (!why.empty() && ++failed <= 2) {
        ADD_FAILURE() << name << " seed " << seed << " budget " << budget << ": " << why << "\n"
                      << text;
      }
    }
    EXPECT_EQ(failed, 0) << name;
  }
}

}  // namespace
}  // namespace baton::server
