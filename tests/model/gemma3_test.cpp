// gemma3 and mistral3 on synthetic files (random weights): what the loader reads from them,
// which layers are windowed and how, the logit softcap, mistral3's attention temperature, and
// batch invariance with prompts longer than the window.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/llama_engine.h"
#include "gguf_rewrite.h"
#include "invariance.h"
#include "support/shared_files.h"
#include "synth/synth_model.h"

namespace baton {
namespace {

using gguf::TensorType;

// 2 heads of 64 (q width 128 over embd 64, so embd / heads = 32 differs from the head
// dimension), one KV head, a window of `swa`.
synth::SynthSpec gemma3_spec(int64_t layers, int64_t swa) {
  synth::SynthSpec spec;
  spec.arch = "gemma3";
  spec.embd = 64;
  spec.layers = layers;
  spec.heads = 2;
  spec.kv_heads = 1;
  spec.head_dim = 64;
  spec.ff = 64;
  spec.swa = swa;
  spec.seed = 4;
  spec.threads = 1;
  return spec;
}

std::string write(const synth::SynthSpec& spec, const std::string& name) {
  const auto path = (testing::scratch_dir() / name).string();
  synth::write_synthetic_model(spec, path);
  return path;
}

// A copy of `base` with `edit` applied to its metadata.
std::string edited(const std::string& base, const std::string& tag,
                   const std::function<void(gguf::GgufWriter&)>& edit) {
  const std::string path = base + "." + tag + ".gguf";
  testing::rewrite(base, path, edit);
  return path;
}

TEST(Gemma3, LoadsItsLayers) {
  auto eng = testing::load_engine(write(gemma3_spec(7, 12), "gemma3.gguf"), 1);
  const auto& h = eng->model().hparams();
  EXPECT_EQ(h.arch, model::Arch::Gemma3);
  EXPECT_STREQ(model::arch_name(h.arch), "gemma3");
  EXPECT_EQ(h.n_swa, 12);
  // No pattern key: llama.cpp's period 6, so layer 5 alone attends to everything.
  EXPECT_EQ(h.swa, (std::vector<bool>{true, true, true, true, true, false, true}));
  EXPECT_EQ(h.rope_base, 1e6f);
  EXPECT_EQ(h.rope_scaling_type, "linear");
  EXPECT_EQ(h.rope_scaling_factor, 8.0f);
  EXPECT_EQ(h.rope_base_swa, 10000.0f);
  EXPECT_EQ(h.rope_mode, model::RopeMode::Neox);
  EXPECT_FLOAT_EQ(h.rms_eps, 1e-6f);
  EXPECT_EQ(h.attention_scale(), 1.0f / 8.0f);  // 1 / sqrt(head_dim 64)
  EXPECT_EQ(h.embd_scale, 8.0f);                // sqrt(embd 64)
  EXPECT_EQ(h.ffn_act, model::FfnAct::GeluTanh);
  EXPECT_EQ(h.final_softcap, 0.0f);
  EXPECT_EQ(h.attn_temp_scale, 0.0f);
  const auto& w = eng->model().weights();
  EXPECT_EQ(w.output.data, w.token_embd.data);  // tied
  EXPECT_EQ(w.layers[3].q_norm.size(), 64u);
  EXPECT_EQ(w.layers[3].post_attn_norm.size(), 64u);
  EXPECT_EQ(w.layers[3].post_ffn_norm.size(), 64u);
  EXPECT_EQ(w.layers[3].ffn_norm.size(), 64u);
}

// The window-pattern key, when present, is the period (an array there is ignored, as llama.cpp
// does); rope.freq_base_swa sets the local layers' base; a window of 0 leaves every layer
// global with the file's rope.
TEST(Gemma3, KeysOverrideTheDefaults) {
  const auto base = write(gemma3_spec(4, 8), "gemma3.gguf");
  auto hp = [](const std::string& path) {
    return testing::load_engine(path, 1)->model().hparams();
  };
  EXPECT_EQ(hp(edited(base, "p3",
                      [](auto& w) { w.set_u32("gemma3.attention.sliding_window_pattern", 3); }))
                .swa,
            (std::vector<bool>{true, true, false, true}));
  EXPECT_EQ(hp(edited(base, "arr",
                      [](auto& w) {
                        w.set_i32s("gemma3.attention.sliding_window_pattern", {0, 1, 0, 1});
                      }))
                .swa,
            (std::vector<bool>{true, true, true, true}));
  EXPECT_EQ(
      hp(edited(base, "swa-base", [](auto& w) { w.set_f32("gemma3.rope.freq_base_swa", 5000.0f); }))
          .rope_base_swa,
      5000.0f);
  const auto none =
      hp(edited(base, "none", [](auto& w) { w.set_u32("gemma3.attention.sliding_window", 0); }));
  EXPECT_EQ(none.n_swa, 0);
  EXPECT_TRUE(none.swa.empty());
  EXPECT_EQ(none.rope_base_swa, 0.0f);
  EXPECT_EQ(none.window(0), 0);
}

// llama.cpp gives the 27B model (62 layers) the query scale 1 / sqrt(embd / heads).
TEST(Gemma3, The27BShapeScalesQueriesByEmbdOverHeads) {
  auto spec = gemma3_spec(62, 8);
  spec.ff = 32;
  const auto h = testing::load_engine(write(spec, "gemma3-62.gguf"), 1)->model().hparams();
  EXPECT_FLOAT_EQ(h.attention_scale(), 1.0f / std::sqrt(32.0f));
}

std::vector<int32_t> prompt_of(size_t n, int32_t mul, int32_t add) {
  std::vector<int32_t> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<int32_t>((i * mul + add) % 259);
  return p;
}

// A final_logit_softcapping key caps every logit at c: c tanh(l / c) of the uncapped ones.
TEST(Gemma3, SoftcapBoundsTheLogits) {
  const auto base = write(gemma3_spec(2, 8), "gemma3.gguf");
  const auto capped =
      edited(base, "cap", [](auto& w) { w.set_f32("gemma3.final_logit_softcapping", 0.5f); });
  auto a = testing::load_engine(base, 1), b = testing::load_engine(capped, 1);
  a->allocate_kv(16);
  b->allocate_kv(16);
  const auto p = prompt_of(9, 37, 11);
  const auto plain = testing::last_logits(*a, p, 0), cap = testing::last_logits(*b, p, 0);
  ASSERT_EQ(plain.size(), cap.size());
  float widest = 0;
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT_LE(std::abs(cap[i]), 0.5f);
    EXPECT_NEAR(cap[i], 0.5f * std::tanh(plain[i] / 0.5f), 1e-6f) << i;
    widest = std::max(widest, std::abs(plain[i]));
  }
  EXPECT_GT(widest, 0.5f);  // the cap did bind somewhere
}

// With every layer windowed (pattern 0; window 4, 2 layers) the last token depends on the last
// 2 x 3 + 1 = 7 tokens only, in any chunking; with the default pattern layer 1 is windowed too,
// so a model of 6 layers whose layer 5 is global sees the whole prompt.
TEST(Gemma3, WindowedTokenSeesNothingBeforeItsWindow) {
  const auto base = write(gemma3_spec(2, 4), "gemma3.gguf");
  auto all_windowed = testing::load_engine(
      edited(base, "p0", [](auto& w) { w.set_u32("gemma3.attention.sliding_window_pattern", 0); }),
      1);
  all_windowed->allocate_kv(64);
  const auto a = prompt_of(40, 37, 11);
  auto b = prompt_of(40, 53, 5);
  for (size_t i = b.size() - 7; i < b.size(); ++i) b[i] = a[i];
  const auto want = testing::last_logits(*all_windowed, a, 0);
  for (int chunk : {0, 1, 5, 16}) {
    EXPECT_TRUE(testing::bit_identical(want, testing::last_logits(*all_windowed, b, chunk)))
        << "chunk " << chunk;
  }
  auto c = a;
  c[a.size() - 7] = (c[a.size() - 7] + 1) % 259;
  EXPECT_FALSE(testing::bit_identical(want, testing::last_logits(*all_windowed, c, 0)));
  auto six = testing::load_engine(write(gemma3_spec(6, 4), "gemma3-6.gguf"), 1);
  six->allocate_kv(64);
  EXPECT_FALSE(
      testing::bit_identical(testing::last_logits(*six, a, 0), testing::last_logits(*six, b, 0)));
}

// A 50-token prompt gives bit-identical logits alone and beside other sequences, whole or in
// chunks that cut the window in different places.
void expect_gemma_invariant(const std::string& path) {
  engine::EngineOptions opts;
  opts.threads = 2;
  auto eng = engine::load_llama_engine(path, opts);
  eng->allocate_kv(1024);
  const auto prompt = prompt_of(50, 37, 11);
  testing::BlockAllocator alloc;
  const auto ref = testing::run_target(*eng, prompt, 0, 0, alloc, 1);
  ASSERT_EQ(ref.size(), 259u);
  uint32_t seed = 2;
  for (auto [chunk, others] : {std::pair{1, 2}, {5, 3}, {7, 0}, {16, 5}, {0, 3}}) {
    testing::BlockAllocator fresh(alloc.used());
    EXPECT_TRUE(testing::bit_identical(
        ref, testing::run_target(*eng, prompt, chunk, others, fresh, seed++)))
        << path << " chunk " << chunk << " others " << others;
  }
}

// embd 256 and q width 256 (4 heads of 64) so the K-quants fit; a window of 12 (not a multiple
// of the cache's 16-position blocks) in layers 0-4 and 6 of 7.
std::string gemma3_model(TensorType type, synth::Mix mix = synth::Mix::kNone) {
  auto spec = gemma3_spec(7, 12);
  spec.embd = 256;
  spec.heads = 4;
  spec.kv_heads = 2;
  spec.ff = 256;
  spec.type = type;
  spec.mix = mix;
  spec.threads = 2;
  const std::string name =
      "gemma3-" +
      std::string(mix == synth::Mix::kNone ? gguf::type_name(type) : synth::mix_name(mix)) +
      ".gguf";
  return write(spec, name);
}

TEST(Gemma3, F32BatchInvariant) {
  expect_gemma_invariant(gemma3_model(TensorType::F32));
}

TEST(Gemma3, Q8_0BatchInvariant) {
  expect_gemma_invariant(gemma3_model(TensorType::Q8_0));
}

TEST(Gemma3, Q4_K_MBatchInvariant) {
  expect_gemma_invariant(gemma3_model(TensorType::Q4_K, synth::Mix::kQ4_K_M));
}

synth::SynthSpec mistral3_spec() {
  synth::SynthSpec spec;
  spec.arch = "mistral3";
  spec.embd = 64;
  spec.layers = 2;
  spec.heads = 4;
  spec.kv_heads = 2;
  spec.head_dim = 32;
  spec.ff = 64;
  spec.seed = 6;
  spec.threads = 1;
  return spec;
}

TEST(Mistral3, LoadsItsKeys) {
  auto eng = testing::load_engine(write(mistral3_spec(), "mistral3.gguf"), 1);
  const auto& h = eng->model().hparams();
  EXPECT_EQ(h.arch, model::Arch::Mistral3);
  EXPECT_STREQ(model::arch_name(h.arch), "mistral3");
  EXPECT_EQ(h.rope_mode, model::RopeMode::Normal);
  EXPECT_EQ(h.rope_base, 1e8f);
  EXPECT_EQ(h.rope_scaling_type, "yarn");
  EXPECT_EQ(h.rope_scaling_factor, 48.0f);
  EXPECT_EQ(h.rope_orig_ctx, 8192);
  EXPECT_EQ(h.rope_yarn_beta_fast, 32.0f);
  EXPECT_EQ(h.rope_yarn_beta_slow, 1.0f);
  EXPECT_EQ(h.rope_yarn_log_mul, 1.0f);
  EXPECT_FLOAT_EQ(h.attn_temp_scale, 0.1f);
  EXPECT_EQ(h.attn_temp_floor, 8192);  // the original context, as llama.cpp takes it
  EXPECT_EQ(h.attention_scale(), 1.0f / std::sqrt(32.0f));
  EXPECT_EQ(h.n_swa, 0);
  EXPECT_EQ(h.ffn_act, model::FfnAct::Silu);
  EXPECT_FALSE(h.post_norms);
  EXPECT_NE(eng->model().weights().output.data, eng->model().weights().token_embd.data);
}

// The temperature multiplies q from the original context on (here shortened to 4 positions):
// a prompt of 4 tokens gives the same bits with or without it, a longer one does not.
TEST(Mistral3, TemperatureActsFromTheOriginalContextOn) {
  const auto base = write(mistral3_spec(), "mistral3.gguf");
  auto short_ctx = [&](const std::string& tag, float beta) {
    return testing::load_engine(edited(base, tag,
                                       [beta](auto& w) {
                                         w.set_u32("mistral3.rope.scaling.original_context_length",
                                                   4);
                                         w.set_f32("mistral3.attention.temperature_scale", beta);
                                       }),
                                1);
  };
  auto with = short_ctx("temp", 0.1f), without = short_ctx("none", 0.0f);
  with->allocate_kv(16);
  without->allocate_kv(16);
  const auto four = prompt_of(4, 37, 11), ten = prompt_of(10, 37, 11);
  EXPECT_TRUE(testing::bit_identical(testing::last_logits(*with, four, 0),
                                     testing::last_logits(*without, four, 0)));
  EXPECT_FALSE(testing::bit_identical(testing::last_logits(*with, ten, 0),
                                      testing::last_logits(*without, ten, 0)));
}

TEST(Mistral3, Q8_0BatchInvariant) {
  auto spec = mistral3_spec();
  spec.type = TensorType::Q8_0;
  expect_gemma_invariant(write(spec, "mistral3-q8.gguf"));
}

}  // namespace
}  // namespace baton
