// `baton gguf info` and `baton gguf synth`, run as the real binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "gguf/gguf_file.h"
#include "support/run_baton.h"
#include "support/shared_files.h"

namespace baton::gguf {
namespace {

using testing::run_baton;

TEST(CliGguf, SynthThenInfo) {
  BATON_REQUIRE_BINARY();
  auto out = testing::scratch_dir() / "m.gguf";
  auto r = run_baton("gguf synth '" + out.string() +
                     "' --arch qwen2 --embd 64 --layers 2 --heads 4 --kv-heads 2 --ff 128 "
                     "--ctx 256 --type q8_0 --byte-vocab --seed 9");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("RANDOM"), std::string::npos) << r.output;
  auto f = GgufFile::open(out.string());
  EXPECT_EQ(f->get_string("general.architecture"), "qwen2");
  EXPECT_EQ(f->find_tensor("blk.1.ffn_down.weight")->type, TensorType::Q8_0);

  r = run_baton("gguf info '" + out.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* want :
       {"general.architecture", "\"qwen2\"", "qwen2.embedding_length", "tokenizer.ggml.tokens",
        "(259 x string)", "[\"<unk>\", \"<s>\"", "blk.1.ffn_down.weight", "q8_0", "[128, 64]",
        "blk.0.attn_q.bias", "tensors (26)", "total: 26 tensors"}) {
    EXPECT_NE(r.output.find(want), std::string::npos) << "missing " << want << "\n" << r.output;
  }
}

// The types added with their quantizers, and a mix, through the command line.
TEST(CliGguf, SynthWritesNewTypesAndMixes) {
  BATON_REQUIRE_BINARY();
  const std::pair<const char*, const char*> cases[] = {
      {"iq4_xs", "iq4_xs"}, {"Q2_K", "q2_K"}, {"q5_0", "q5_0"}, {"q3_k_m", "q5_K"}};
  for (auto [flag, attn_v] : cases) {
    auto out = testing::scratch_dir() / "t.gguf";
    auto r = run_baton("gguf synth '" + out.string() +
                       "' --embd 256 --layers 2 --heads 4 --kv-heads 4 --ff 256 --type " + flag +
                       " --byte-vocab");
    ASSERT_EQ(r.status, 0) << flag << "\n" << r.output;
    auto f = GgufFile::open(out.string());
    EXPECT_EQ(type_name(f->find_tensor("blk.0.attn_v.weight")->type), attn_v) << flag;
  }
}

TEST(CliGguf, SynthQwen3MoeThenInfoShowsExperts) {
  BATON_REQUIRE_BINARY();
  auto out = testing::scratch_dir() / "moe.gguf";
  auto r = run_baton("gguf synth '" + out.string() +
                     "' --arch qwen3moe --embd 64 --layers 2 --heads 4 --kv-heads 2 --experts 6 "
                     "--experts-used 2 --expert-ff 64 --type q8_0 --byte-vocab");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("experts=6 used=2 expert_ff=64"), std::string::npos) << r.output;
  auto f = GgufFile::open(out.string());
  EXPECT_EQ(f->find_tensor("blk.1.ffn_down_exps.weight")->dims, (std::vector<uint64_t>{64, 64, 6}));
  r = run_baton("gguf info '" + out.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("experts: 6 per layer, 2 used per token, expert feed-forward length 64"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("[64, 64, 6]"), std::string::npos) << r.output;
  // The engine's startup line names the architecture and the experts.
  r = run_baton("run -m '" + out.string() + "' -n 2 -p hi --threads 1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("(qwen3moe): 2 layers, embd 64, heads 4/2, experts 6 (2 used per "
                          "token), expert ff 64"),
            std::string::npos)
      << r.output;
  r = run_baton("gguf synth '" + out.string() +
                "' --arch qwen3moe --experts 4 --experts-used 5 --byte-vocab");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("--experts-used 5: expected 1..4"), std::string::npos) << r.output;
}

TEST(CliGguf, SynthGptOssThenInfoShowsTheWindow) {
  BATON_REQUIRE_BINARY();
  auto out = testing::scratch_dir() / "gpt-oss.gguf";
  auto r =
      run_baton("gguf synth '" + out.string() +
                "' --arch gpt-oss --embd 64 --layers 3 --heads 4 --kv-heads 2 --head-dim 32 "
                "--experts 4 --experts-used 2 --expert-ff 32 --swa 8 --type q8_0 --byte-vocab");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("experts=4 used=2 expert_ff=32 window=8"), std::string::npos) << r.output;
  r = run_baton("gguf info '" + out.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("attention: sliding window of 8 positions in layers 0, 2, 4, ..."),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("blk.2.attn_sinks.weight"), std::string::npos) << r.output;
  // The engine's startup line names the architecture, the experts and the window.
  r = run_baton("run -m '" + out.string() + "' -n 2 -p hi --threads 1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("(gpt-oss): 3 layers, embd 64, heads 4/2, experts 4 (2 used per "
                          "token), expert ff 32, sliding window 8 in 2 of 3 layers"),
            std::string::npos)
      << r.output;
  r = run_baton("gguf synth '" + out.string() + "' --arch gpt-oss --swa 0 --byte-vocab");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("--swa 0"), std::string::npos) << r.output;
}

TEST(CliGguf, SynthGemma3ThenInfoShowsTheWindow) {
  BATON_REQUIRE_BINARY();
  auto out = testing::scratch_dir() / "gemma3.gguf";
  auto r = run_baton("gguf synth '" + out.string() +
                     "' --arch gemma3 --embd 64 --layers 7 --heads 2 --kv-heads 1 --head-dim 32 "
                     "--ff 64 --swa 8 --type q8_0 --byte-vocab");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("gemma3 embd=64 layers=7 heads=2/1 ff=64 window=8"), std::string::npos)
      << r.output;
  r = run_baton("gguf info '" + out.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("attention: sliding window of 8 positions in 5 of every 6 layers; "
                          "layers 5, 11, 17, ... attend to the whole context"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("blk.6.post_ffw_norm.weight"), std::string::npos) << r.output;
  // Layers 0-4 and 6 are windowed, layer 5 is global.
  r = run_baton("run -m '" + out.string() + "' -n 2 -p hi --threads 1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("(gemma3): 7 layers, embd 64, heads 2/1, ff 64, sliding window 8 in "
                          "6 of 7 layers"),
            std::string::npos)
      << r.output;
  r = run_baton("gguf synth '" + out.string() + "' --arch gemma3 --swa 0 --byte-vocab");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("--swa 0"), std::string::npos) << r.output;
}

TEST(CliGguf, SynthMistral3Runs) {
  BATON_REQUIRE_BINARY();
  auto out = testing::scratch_dir() / "mistral3.gguf";
  auto r = run_baton("gguf synth '" + out.string() +
                     "' --arch mistral3 --embd 64 --layers 2 --heads 4 --kv-heads 2 "
                     "--head-dim 32 --ff 64 --type q8_0 --byte-vocab");
  ASSERT_EQ(r.status, 0) << r.output;
  r = run_baton("run -m '" + out.string() + "' -n 2 -p hi --threads 1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("(mistral3): 2 layers, embd 64, heads 4/2, ff 64"), std::string::npos)
      << r.output;
}

// `--type mxfp4` writes a MoE model's experts in MXFP4; `gguf info` lists them and the engine
// runs the model.
TEST(CliGguf, SynthMxfp4ThenInfoAndRun) {
  BATON_REQUIRE_BINARY();
  auto out = testing::scratch_dir() / "mx.gguf";
  auto r = run_baton("gguf synth '" + out.string() +
                     "' --arch qwen3moe --embd 64 --layers 2 --heads 4 --kv-heads 2 --experts 4 "
                     "--experts-used 2 --expert-ff 64 --type mxfp4 --byte-vocab");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("type=MXFP4_MOE"), std::string::npos) << r.output;
  r = run_baton("gguf info '" + out.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* want : {"general.file_type", "38", "blk.1.ffn_up_exps.weight", "mxfp4",
                           "[64, 64, 4]", "blk.1.attn_q.weight", "q8_0"}) {
    EXPECT_NE(r.output.find(want), std::string::npos) << "missing " << want << "\n" << r.output;
  }
  r = run_baton("run -m '" + out.string() + "' -n 2 -p hi --threads 1");
  EXPECT_EQ(r.status, 0) << r.output;
}

TEST(CliGguf, InfoOnStories260K) {
  BATON_REQUIRE_BINARY();
  BATON_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto r = run_baton("gguf info '" + path.string() + "'");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("metadata (19 keys)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("tensors (48)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("token_embd.weight"), std::string::npos);
}

TEST(CliGguf, InfoRefusesVersion1) {
  BATON_REQUIRE_BINARY();
  BATON_REQUIRE_SHARED(path, "models/tinyllamas-stories-260k-f32.gguf");
  auto r = run_baton("gguf info '" + path.string() + "'");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("baton: error:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("version 1 is not supported"), std::string::npos) << r.output;
}

TEST(CliGguf, SynthFlagErrors) {
  BATON_REQUIRE_BINARY();
  auto out = (testing::scratch_dir() / "x.gguf").string();
  auto r = run_baton("gguf synth '" + out +
                     "' --embd 64 --heads 4 --kv-heads 4 --type q4_k --byte-vocab");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("--embd 64"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("multiple of 256"), std::string::npos) << r.output;
  r = run_baton("gguf synth '" + out + "' --type q5_1 --byte-vocab");
  EXPECT_EQ(r.status, 1);
  // One line naming the value and every accepted one.
  EXPECT_NE(r.output.find("--type q5_1: expected f32, f16, q8_0, q4_0, q4_1, q5_0, iq4_nl, q2_k, "
                          "q3_k, q4_k, q5_k, q6_k, iq4_xs, q3_k_m, q4_k_m, q5_k_m or mxfp4\n"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
  r = run_baton("gguf synth '" + out + "'");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("--byte-vocab"), std::string::npos) << r.output;
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace baton::gguf
