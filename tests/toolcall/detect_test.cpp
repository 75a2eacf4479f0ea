// detect_format() on the real templates of the JSON families.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "support/shared_files.h"
#include "toolcall/output_format.h"

namespace baton::toolcall {
namespace {

TEST(DetectFormat, JsonFamiliesFromTheirTemplates) {
  BATON_REQUIRE_SHARED(dir, "chat-templates");
  const std::vector<std::pair<std::string, std::string>> expect = {
      {"Qwen-Qwen2.5-7B-Instruct", "hermes"},
      {"Qwen-Qwen3-0.6B", "hermes"},
      {"Qwen-QwQ-32B", "hermes"},
      {"NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use", "hermes"},
      {"NousResearch-Hermes-3-Llama-3.1-8B-tool_use", "hermes"},
      {"MiMo-VL", "hermes"},
      {"meta-llama-Llama-3.1-8B-Instruct", "llama3"},
      {"meta-llama-Llama-3.2-3B-Instruct", "llama3"},
      {"meta-llama-Llama-3.3-70B-Instruct", "llama3"},
      {"fireworks-ai-llama-3-firefunction-v2", "firefunction"},
      {"mistralai-Mistral-Nemo-Instruct-2407", "mistral"},
      {"unsloth-mistral-Devstral-Small-2507", "mistral"},
      {"mistralai-Ministral-3-14B-Reasoning-2512", "mistral"},
      {"llama-cpp-deepseek-r1", "deepseek"},
      {"deepseek-ai-DeepSeek-R1-Distill-Qwen-32B", "deepseek"},
      {"deepseek-ai-DeepSeek-V3.2", "deepseek-v3.2"},
      {"deepseek-ai-DeepSeek-V4", "deepseek-v3.2"},
      {"MiniMax-M1", "minimax-m1"},
      {"unsloth-Apriel-1.5", "apriel"},
      {"Apriel-1.6-15b-Thinker-fixed", "apriel"},
      {"Apertus-8B-Instruct", "apertus"},
      {"GigaChat3-10B-A1.8B", "gigachat3"},
      {"GigaChat3.1-10B-A1.8B", "gigachat3.1"},
  };
  for (const auto& [file, name] : expect) {
    std::ifstream in(dir / (file + ".json"), std::ios::binary);
    auto golden = nlohmann::json::parse(in);
    EXPECT_EQ(detect_format(golden.at("source").get<std::string>()), name) << file;
  }
}

}  // namespace
}  // namespace baton::toolcall
