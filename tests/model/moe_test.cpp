// Mixture-of-experts layers on synthetic qwen3moe and gpt-oss models (random weights): routing,
// activations, batch invariance, every type synth writes, the interleaved layout.
#include "model/moe.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <numeric>

#include "engine/generate.h"
#include "engine/llama_engine.h"
#include "gguf/gguf_file.h"
#include "invariance.h"
#include "kernels/simd.h"
#include "model/ops.h"
#include "support/shared_files.h"
#include "synth/synth_model.h"

namespace baton {
namespace {

using gguf::TensorType;

// 16 experts of which each token uses 4, so a step's rows share some experts and not others;
// `small`: one layer of 4 experts (for the tests that write a file per type).
synth::SynthSpec moe_spec(TensorType type, synth::Mix mix, bool small) {
  synth::SynthSpec spec;
  spec.arch = "qwen3moe";
  spec.embd = 256;
  spec.layers = small ? 1 : 2;
  spec.heads = 4;
  spec.kv_heads = 2;
  spec.ff = 768;
  spec.experts = small ? 4 : 16;
  spec.experts_used = small ? 2 : 4;
  spec.expert_ff = 256;  // a multiple of the K-quants' 256
  spec.ctx = 1024;
  spec.type = type;
  spec.mix = mix;
  spec.seed = 5;
  spec.threads = 2;
  return spec;
}

// gpt-oss with 8 heads of 64 (a q width of 512 over embd 256), a window of 20 (not a multiple
// of the cache's 16-position blocks) in layers 0 and 2 of 3.
synth::SynthSpec gpt_oss_spec(TensorType type, synth::Mix mix) {
  synth::SynthSpec spec = moe_spec(type, mix, false);
  spec.arch = "gpt-oss";
  spec.layers = 3;
  spec.heads = 8;
  spec.head_dim = 64;
  spec.experts = 8;
  spec.experts_used = 2;
  spec.swa = 20;
  return spec;
}

// Writes each model once per test process.
std::string moe_model(TensorType type, synth::Mix mix = synth::Mix::kNone, bool small = false,
                      const std::string& arch = "qwen3moe") {
  static std::mutex mu;
  static std::map<std::string, std::string> made;
  std::lock_guard lock(mu);
  const std::string key =
      arch + "-" + std::string(small ? "small-" : "") +
      std::string(mix == synth::Mix::kNone ? gguf::type_name(type) : synth::mix_name(mix));
  if (auto it = made.find(key); it != made.end()) return it->second;
  const auto dir = testing::scratch_root() / "model-moe";
  std::filesystem::create_directories(dir);
  const auto path = (dir / (key + ".gguf")).string();
  synth::write_synthetic_model(
      arch == "gpt-oss" ? gpt_oss_spec(type, mix) : moe_spec(type, mix, small), path);
  return made[key] = path;
}

std::string gpt_oss_model(TensorType type, synth::Mix mix = synth::Mix::kNone) {
  return moe_model(type, mix, false, "gpt-oss");
}

model::MoeParams params(int32_t n_expert, int32_t k, bool norm = true) {
  model::MoeParams p;
  p.n_expert = n_expert;
  p.n_used = k;
  p.n_ff = 1;
  p.norm_topk = norm;
  return p;
}

TEST(MoeRouting, SoftmaxTopKRenormalised) {
  const float logits[] = {0.5f, 2.0f, -1.0f, 1.0f, 2.0f};
  int32_t ids[3];
  float w[3];
  model::route_experts(params(5, 3), logits, ids, w);
  // Ties go to the lower id: 1 before 4.
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], 4);
  EXPECT_EQ(ids[2], 3);
  const double e2 = std::exp(2.0), e1 = std::exp(1.0);
  EXPECT_NEAR(w[0], e2 / (2 * e2 + e1), 1e-6);
  EXPECT_NEAR(w[1], e2 / (2 * e2 + e1), 1e-6);
  EXPECT_NEAR(w[2], e1 / (2 * e2 + e1), 1e-6);
  EXPECT_NEAR(w[0] + w[1] + w[2], 1.0, 1e-6);
  // Without renormalising: the softmax over all five.
  model::route_experts(params(5, 3, false), logits, ids, w);
  double z = 0;
  for (float l : logits) z += std::exp(double(l));
  EXPECT_NEAR(w[0], e2 / z, 1e-6);
  EXPECT_NEAR(w[2], e1 / z, 1e-6);
}

TEST(MoeRouting, NanRanksLastAndKEqualsN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float logits[] = {nan, 1.0f, 3.0f, nan};
  int32_t ids[4];
  float w[4];
  model::route_experts(params(4, 4), logits, ids, w);
  EXPECT_EQ(ids[0], 2);
  EXPECT_EQ(ids[1], 1);
  EXPECT_EQ(ids[2], 0);
  EXPECT_EQ(ids[3], 3);
  model::route_experts(params(4, 1), logits, ids, w);
  EXPECT_EQ(ids[0], 2);
}

// gpt-oss: the k largest logits, then a softmax over those k alone (not over all experts).
TEST(MoeRouting, TopKThenSoftmax) {
  model::MoeParams p = params(5, 2, false);
  p.gating = model::ExpertGating::TopKSoftmax;
  const float logits[] = {0.5f, 2.0f, -1.0f, 1.0f, 2.5f};
  int32_t ids[2];
  float w[2];
  model::route_experts(p, logits, ids, w);
  EXPECT_EQ(ids[0], 4);
  EXPECT_EQ(ids[1], 1);
  EXPECT_NEAR(w[0], 1.0 / (1.0 + std::exp(-0.5)), 1e-6);
  EXPECT_NEAR(w[1], 1.0 / (1.0 + std::exp(0.5)), 1e-6);
  // One expert: weight exactly 1, whatever its logit.
  p.n_used = 1;
  model::route_experts(p, logits, ids, w);
  EXPECT_EQ(ids[0], 4);
  EXPECT_EQ(w[0], 1.0f);
  // Ties to the lower id, NaN last.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float tied[] = {nan, 1.0f, 1.0f, -3.0f, 1.0f};
  p.n_used = 3;
  int32_t ids3[3];
  float w3[3];
  model::route_experts(p, tied, ids3, w3);
  EXPECT_EQ(ids3[0], 1);
  EXPECT_EQ(ids3[1], 2);
  EXPECT_EQ(ids3[2], 4);
  EXPECT_NEAR(w3[2], 1.0 / 3, 1e-6);
}

// gpt-oss's experts: x = min(gate, 7), y = clamp(up, -7, 7), x * sigmoid(1.702 x) * (y + 1).
TEST(MoeActivation, ClampedSwiglu) {
  std::vector<float> gate = {10.0f, -3.0f, 0.5f, 7.0f, -20.0f};
  const std::vector<float> up = {10.0f, -9.0f, 0.25f, -7.5f, 1.0f};
  auto want = [](double x, double y) { return x / (1 + std::exp(-1.702 * x)) * (y + 1); };
  model::swiglu_oai(gate.data(), up.data(), 5, 1.702f, 7.0f);
  EXPECT_NEAR(gate[0], want(7, 7), 1e-4);
  EXPECT_NEAR(gate[1], want(-3, -7), 1e-5);
  EXPECT_NEAR(gate[2], want(0.5, 0.25), 1e-6);
  EXPECT_NEAR(gate[3], want(7, -7), 1e-4);
  EXPECT_NEAR(gate[4], want(-20, 1), 1e-12);
}

TEST(MoeModel, Q8_0BatchInvariant) {
  testing::expect_chunkings_invariant(moe_model(TensorType::Q8_0), 2, 20);
}

TEST(MoeModel, Q4_K_MBatchInvariant) {
  testing::expect_chunkings_invariant(moe_model(TensorType::Q4_K, synth::Mix::kQ4_K_M), 2, 20);
}

TEST(MoeModel, Mxfp4MoeBatchInvariant) {
  testing::expect_chunkings_invariant(moe_model(TensorType::Q8_0, synth::Mix::kMXFP4_MOE), 2, 20);
}

TEST(MoeModel, F32BatchInvariantOnOneThread) {
  testing::expect_chunkings_invariant(moe_model(TensorType::F32), 1, 20);
}

// gpt-oss: the 70-token prompt is longer than the window (20), so its windowed layers mask and
// skip blocks, differently in each chunking, beside companions whose windows start elsewhere.
TEST(MoeModel, GptOssQ8_0BatchInvariant) {
  testing::expect_chunkings_invariant(gpt_oss_model(TensorType::Q8_0), 2, 20);
}

TEST(MoeModel, GptOssQ4_K_MBatchInvariant) {
  testing::expect_chunkings_invariant(gpt_oss_model(TensorType::Q4_K, synth::Mix::kQ4_K_M), 2, 20);
}

TEST(MoeModel, GptOssF32BatchInvariantOnOneThread) {
  testing::expect_chunkings_invariant(gpt_oss_model(TensorType::F32), 1, 20);
}

// The model keeps its activation buffers between passes: a pass after a larger one (whose
// rows, experts' gathered rows and scratch are longer and hold other values) gives the logits
// of a freshly loaded model, to the bit.
TEST(MoeModel, BuffersLeftByALargerPassChangeNothing) {
  for (const auto& path : {moe_model(TensorType::Q8_0), gpt_oss_model(TensorType::Q8_0)}) {
    auto fresh = testing::load_engine(path, 2);
    fresh->allocate_kv(64);
    const auto prompt = testing::some_prompt(9, fresh->info().n_vocab);
    const auto want = testing::last_logits(*fresh, prompt, 0);
    auto used = testing::load_engine(path, 2);
    used->allocate_kv(64);
    const int32_t n_vocab = used->info().n_vocab;
    std::vector<int32_t> larger(150);
    for (size_t i = 0; i < larger.size(); ++i) larger[i] = int32_t((i * 91 + 5) % n_vocab);
    testing::last_logits(*used, larger, 0);
    EXPECT_TRUE(testing::bit_identical(want, testing::last_logits(*used, prompt, 0))) << path;
  }
}

TEST(MoeModel, LoadsExpertsAndCountsOnlyTheUsedOnesPerToken) {
  engine::EngineOptions opts;
  opts.threads = 1;
  auto eng = engine::load_llama_engine(moe_model(TensorType::Q8_0), opts);
  const auto& h = eng->model().hparams();
  EXPECT_EQ(h.arch, model::Arch::Qwen3Moe);
  EXPECT_STREQ(model::arch_name(h.arch), "qwen3moe");
  EXPECT_EQ(h.moe.n_expert, 16);
  EXPECT_EQ(h.moe.n_used, 4);
  EXPECT_EQ(h.moe.n_ff, 256);
  const auto& w = eng->model().weights();
  ASSERT_EQ(w.layers.size(), 2u);
  EXPECT_EQ(w.layers[1].ffn, model::FfnKind::Moe);
  ASSERT_EQ(w.layers[1].moe.down.size(), 16u);
  EXPECT_EQ(w.layers[1].moe.down[3].rows, 256);
  EXPECT_EQ(w.layers[1].moe.down[3].cols, 256);
  EXPECT_EQ(w.layers[1].moe.router.type, TensorType::F32);
  // Per token: attention 2 x 256 x 256 (q, o) + 2 x 256 x 128 (k, v), the router 16 x 256, and
  // 4 of 16 experts of 3 x 256 x 256, per layer; the output 256 x n_vocab.
  const uint64_t per_layer = 2 * 256 * 256 + 2 * 256 * 128 + 16 * 256 + 4 * 3 * 256 * 256;
  EXPECT_EQ(w.matmul_params_per_token, 2 * per_layer + 256ull * h.n_vocab);
}

// Every type `baton gguf synth` writes, as a qwen3moe, loads and follows the F32 model's logits
// (closer with more bits; a wrongly laid out expert gives an unrelated model, cosine near 0).
TEST(MoeModel, EveryWrittenTypeRuns) {
  using synth::Mix;
  struct Case {
    TensorType type;
    Mix mix;
    double min_cosine;
  };
  // Measured (the same at every SIMD level): F16 1.000, Q8_0 1.000, Q4_0 0.982, Q4_1 0.988,
  // Q5_0 0.995, IQ4_NL 0.981, Q2_K 0.655, Q3_K 0.932, Q4_K 0.983, Q5_K 0.996, Q6_K 0.999,
  // IQ4_XS 0.965, Q4_K_M 0.986, MXFP4_MOE 0.993 (its non-expert matrices are Q8_0).
  const Case cases[] = {
      {TensorType::F16, Mix::kNone, 0.999},   {TensorType::Q8_0, Mix::kNone, 0.995},
      {TensorType::Q4_0, Mix::kNone, 0.95},   {TensorType::Q4_1, Mix::kNone, 0.95},
      {TensorType::Q5_0, Mix::kNone, 0.98},   {TensorType::IQ4_NL, Mix::kNone, 0.95},
      {TensorType::Q2_K, Mix::kNone, 0.5},    {TensorType::Q3_K, Mix::kNone, 0.85},
      {TensorType::Q4_K, Mix::kNone, 0.95},   {TensorType::Q5_K, Mix::kNone, 0.98},
      {TensorType::Q6_K, Mix::kNone, 0.99},   {TensorType::IQ4_XS, Mix::kNone, 0.93},
      {TensorType::Q4_K, Mix::kQ4_K_M, 0.95}, {TensorType::MXFP4, Mix::kMXFP4_MOE, 0.97},
  };
  const auto ref = testing::first_logits(moe_model(TensorType::F32, Mix::kNone, true));
  for (const auto& c : cases) {
    // A mix's experts may have another type than its base (MXFP4_MOE: MXFP4 and Q8_0).
    const auto path =
        moe_model(c.mix == Mix::kNone ? c.type : synth::mix_base_type(c.mix), c.mix, true);
    const std::string what = path.substr(path.rfind('/') + 1);
    auto f = gguf::GgufFile::open(path);
    EXPECT_EQ(f->find_tensor("blk.0.ffn_up_exps.weight")->type, c.type) << what;
    EXPECT_EQ(f->find_tensor("blk.0.ffn_gate_inp.weight")->type, TensorType::F32) << what;
    const auto logits = testing::first_logits(path);
    ASSERT_EQ(logits.size(), ref.size()) << what;
    for (float v : logits) ASSERT_TRUE(std::isfinite(v)) << what;
    const double cos = testing::cosine(ref, logits);
    std::printf("[ measure  ] %s: cosine to F32 %.4f\n", what.c_str(), cos);
    EXPECT_GE(cos, c.min_cosine) << what;
  }
}

// Interleaved at load (the AVX-512 default), each expert's gate and up are stacked into one
// matrix in 16-row tiles; the logits stay those of the file's layout within float rounding.
TEST(MoeModel, InterleavedExpertsKeepTheLogits) {
  for (auto [type, mix] : {std::pair{TensorType::Q8_0, synth::Mix::kNone},
                           {TensorType::Q4_K, synth::Mix::kNone},
                           {TensorType::Q8_0, synth::Mix::kMXFP4_MOE}}) {
    const auto path = moe_model(type, mix);
    engine::EngineOptions opts;
    opts.threads = 2;
    auto eng = engine::load_llama_engine(path, opts);
    const bool interleaved = kernels::active_simd_level() == kernels::SimdLevel::Avx512;
    const auto& moe = eng->model().weights().layers[1].moe;
    for (size_t e = 0; e < moe.gate_up.size(); ++e) {
      EXPECT_EQ(moe.gate_up[e].data != nullptr, interleaved) << e;
      EXPECT_EQ(moe.down[e].interleave != 1, interleaved) << e;
    }
    const auto plain = testing::first_logits(path, 24, false),
               tiled = testing::first_logits(path, 24, true);
    ASSERT_EQ(plain.size(), tiled.size());
    float scale = 1, worst = 0;
    for (size_t i = 0; i < plain.size(); ++i) {
      scale = std::max(scale, std::fabs(plain[i]));
      worst = std::max(worst, std::fabs(plain[i] - tiled[i]));
    }
    EXPECT_LE(worst, 2e-2f * scale) << path;
  }
}

}  // namespace
}  // namespace baton
