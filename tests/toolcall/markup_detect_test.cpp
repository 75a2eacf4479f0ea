// detect_format() on snippets of each family's markup and on the golden templates of the
// XML-like and channel families; detect_test.cpp has the JSON families' templates.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>

#include "format_check.h"
#include "support/shared_files.h"
#include "toolcall/output_format.h"

namespace baton::toolcall {
namespace {

TEST(DetectMarkupFormats, Snippets) {
  EXPECT_EQ(detect_format("{{ '<tool_call>\\n<function=' + name + '>\\n<parameter=' }}"),
            "qwen3-coder");
  EXPECT_EQ(detect_format("<seed:tool_call>\\n<function=x>\\n<parameter=y>"), "seed-oss");
  EXPECT_EQ(detect_format("<tool_call>{{ name }}<arg_key>k</arg_key>"), "glm");
  EXPECT_EQ(detect_format("<minimax:tool_call>\\n<invoke name="), "minimax");
  EXPECT_EQ(detect_format("<|tool_calls_section_begin|>"), "kimi-k2");
  EXPECT_EQ(detect_format("<function={{ name }}>{{ args }}</function>"), "functionary");
  EXPECT_EQ(detect_format("<|START_ACTION|>"), "command-r");
  EXPECT_EQ(detect_format("<|start|>assistant<|channel|>analysis<|message|>"), "gpt-oss");
  EXPECT_EQ(detect_format("<tool_call>\\n{{ call | tojson }}\\n</tool_call>"), "hermes");
  EXPECT_EQ(detect_format("{{- '<|tool_call>call:' + function['name'] + '{' -}}"), "gemma4");
  EXPECT_EQ(detect_format("{{- \"<|tool_call_start|>[\" -}}"), "lfm2");
  EXPECT_EQ(detect_format("'<function name=\"' ~ name ~ '\">' '<param name=\"'"), "minicpm5");
  EXPECT_EQ(detect_format("<|start|>assistant to=f<|message|><atem:function_calls>"),
            "muse-glimmer");
  EXPECT_EQ(detect_format(""), "hermes");  // the default
}

TEST(DetectMarkupFormats, GoldenTemplates) {
  BATON_REQUIRE_SHARED(dir, "chat-templates");
  std::map<std::string, std::string> expected = {
      {"Qwen3-Coder", "qwen3-coder"},
      {"NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", "qwen3-coder"},
      {"StepFun3.5-Flash", "qwen3-coder"},
      {"ByteDance-Seed-OSS", "seed-oss"},
      {"GLM-4.7-Flash", "glm"},
      {"poolside-Laguna-S-2.1", "glm"},
      {"poolside-Laguna-XS-2.1", "glm"},
      {"poolside-Laguna-XS.2", "glm"},
      {"tencent-Hy3", "hy3"},
      {"MiniMax-M3", "minimax-m3"},
      {"moonshotai-Kimi-K2", "kimi-k2"},
      {"Kimi-K2-Thinking", "kimi-k2"},
      {"meetkai-functionary-medium-v3.1", "functionary"},
      {"CohereForAI-c4ai-command-r-plus-tool_use", "command-r"},
      {"CohereForAI-c4ai-command-r7b-12-2024-tool_use", "command-r"},
      {"Cohere2MoE", "command-r"},
      {"upstage-Solar-Open-100B", "solar-open"},
      {"google-gemma-4-31B-it-interleaved", "gemma4"},
      {"LFM2.5-8B-A1B", "lfm2"},
      {"openbmb-MiniCPM5-1B", "minicpm5"},
      {"muse-glimmer", "muse-glimmer"},
      {"Kimi-K3", "kimi-k3"},
  };
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    std::string stem = entry.path().stem().string();
    auto it = expected.find(stem);
    const std::string got = detect_format(testing::read_source(entry.path()));
    if (it != expected.end()) {
      EXPECT_EQ(got, it->second) << stem;
    } else {
      // Every other template is one of the JSON families' (or none, which reads as Hermes):
      // no markup family claims it.
      static const std::set<std::string> json_families = {
          "hermes",     "llama3", "firefunction", "mistral",   "deepseek",   "deepseek-v3.2",
          "minimax-m1", "apriel", "apertus",      "gigachat3", "gigachat3.1"};
      EXPECT_TRUE(json_families.contains(got)) << stem << ": " << got;
    }
  }
}

TEST(DetectMarkupFormats, EveryNameMakesAFormat) {
  for (const auto& name : format_names()) {
    auto f = make_format(name, {});
    ASSERT_TRUE(f) << name;
    EXPECT_EQ(f->name(), name);
  }
  EXPECT_FALSE(make_format("no-such-format", {}));
}

}  // namespace
}  // namespace baton::toolcall
