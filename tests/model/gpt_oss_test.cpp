// gpt-oss on synthetic files (random weights): what the loader reads from them, which layers
// are windowed, and that a windowed layer's token sees nothing before its window.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/llama_engine.h"
#include "gguf_rewrite.h"
#include "invariance.h"
#include "support/shared_files.h"
#include "synth/synth_model.h"
#include "tiny_gpt_oss.h"

namespace baton {
namespace {

std::string gpt_oss_file(const std::filesystem::path& dir, int64_t layers, int64_t swa) {
  const auto spec = testing::tiny_gpt_oss_spec(layers, swa, 3);
  const auto path = (dir / "gpt-oss.gguf").string();
  synth::write_synthetic_model(spec, path);
  return path;
}

// The file with attention.sliding_window_pattern set to `period`.
std::string with_pattern(const std::string& base, uint32_t period) {
  const std::string path = base + ".pattern.gguf";
  testing::rewrite(base, path, [period](gguf::GgufWriter& w) {
    w.set_u32("gpt-oss.attention.sliding_window_pattern", period);
  });
  return path;
}

std::vector<bool> windowed_layers(const std::string& path) {
  return testing::load_engine(path, 1)->model().hparams().swa;
}

TEST(GptOss, LoadsItsLayers) {
  const auto path = gpt_oss_file(testing::scratch_dir(), 3, 8);
  auto eng = testing::load_engine(path, 1);
  const auto& h = eng->model().hparams();
  EXPECT_EQ(h.arch, model::Arch::GptOss);
  EXPECT_STREQ(model::arch_name(h.arch), "gpt-oss");
  EXPECT_EQ(h.head_dim, 32);
  EXPECT_EQ(h.q_dim(), 128);
  EXPECT_EQ(h.n_rot, 32);
  EXPECT_EQ(h.n_swa, 8);
  EXPECT_EQ(h.swa, (std::vector<bool>{true, false, true}));
  EXPECT_EQ(h.window(0), 8);
  EXPECT_EQ(h.window(1), 0);
  EXPECT_EQ(h.rope_scaling_type, "yarn");
  EXPECT_EQ(h.rope_orig_ctx, 4096);
  EXPECT_EQ(h.moe.gating, model::ExpertGating::TopKSoftmax);
  EXPECT_EQ(h.moe.act, model::ExpertAct::SwigluOai);
  EXPECT_FALSE(h.moe.norm_topk);
  const auto& l = eng->model().weights().layers[2];
  EXPECT_EQ(l.sinks.size(), 4u);
  EXPECT_EQ(l.bq.size(), 128u);
  EXPECT_EQ(l.bk.size(), 64u);
  EXPECT_EQ(l.bo.size(), 64u);
  EXPECT_EQ(l.moe.router_bias.size(), 4u);
  EXPECT_EQ(l.moe.gate_bias.size(), 4u * 32);
  EXPECT_EQ(l.moe.up_bias.size(), 4u * 32);
  EXPECT_EQ(l.moe.down_bias.size(), 4u * 64);
}

// The pattern key, when present, is a period p: layer il is windowed when il % p < p - 1, and
// p = 0 windows every layer (llama.cpp's rule); an array there is ignored, as llama.cpp does.
TEST(GptOss, WindowPatternKey) {
  const auto base = gpt_oss_file(testing::scratch_dir(), 4, 8);
  EXPECT_EQ(windowed_layers(base), (std::vector<bool>{true, false, true, false}));
  EXPECT_EQ(windowed_layers(with_pattern(base, 3)), (std::vector<bool>{true, true, false, true}));
  EXPECT_EQ(windowed_layers(with_pattern(base, 0)), (std::vector<bool>{true, true, true, true}));
  EXPECT_EQ(windowed_layers(with_pattern(base, 1)),
            (std::vector<bool>{false, false, false, false}));
  const std::string arr = base + ".array.gguf";
  testing::rewrite(base, arr, [](gguf::GgufWriter& w) {
    w.set_i32s("gpt-oss.attention.sliding_window_pattern", {1, 0, 0, 1});
  });
  EXPECT_EQ(windowed_layers(arr), (std::vector<bool>{true, false, true, false}));
}

// With every layer windowed (4 positions, 2 layers) the last token depends on the last
// 2 x 3 + 1 = 7 tokens only: prompts that differ before them give bit-identical logits, in any
// chunking; a difference inside them, or a global layer, changes the logits.
TEST(GptOss, WindowedTokenSeesNothingBeforeItsWindow) {
  const auto base = gpt_oss_file(testing::scratch_dir(), 2, 4);
  auto all_windowed = testing::load_engine(with_pattern(base, 0), 1);
  all_windowed->allocate_kv(64);
  std::vector<int32_t> a(40), b(40);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = int32_t((i * 37 + 11) % 259);
    b[i] = i + 7 < a.size() ? int32_t((i * 53 + 5) % 259) : a[i];
  }
  const auto want = testing::last_logits(*all_windowed, a, 0);
  for (int chunk : {0, 1, 5, 16}) {
    EXPECT_TRUE(testing::bit_identical(want, testing::last_logits(*all_windowed, b, chunk)))
        << "chunk " << chunk;
  }
  auto c = a;
  c[a.size() - 7] = (c[a.size() - 7] + 1) % 259;
  EXPECT_FALSE(testing::bit_identical(want, testing::last_logits(*all_windowed, c, 0)));
  auto alternating = testing::load_engine(base, 1);  // layer 1 attends to the whole context
  alternating->allocate_kv(64);
  EXPECT_FALSE(testing::bit_identical(testing::last_logits(*alternating, a, 0),
                                      testing::last_logits(*alternating, b, 0)));
}

}  // namespace
}  // namespace baton
