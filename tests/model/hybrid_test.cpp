// The hybrid qwen35moe on synthetic files (random weights): gated DeltaNet layers, each
// sequence's recurrent state, batch invariance, the layer pattern, IMRoPE, every type synth
// writes for it.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/generate.h"
#include "engine/llama_engine.h"
#include "gguf/gguf_file.h"
#include "hybrid_spec.h"
#include "invariance.h"
#include "kernels/simd.h"
#include "model/delta_net.h"
#include "model/rope.h"
#include "synth/synth_model.h"

namespace baton {
namespace {

using gguf::TensorType;
using testing::forward_error;
using testing::hybrid_model;
using testing::one_chunk;

TEST(HybridModel, Q8_0BatchInvariant) {
  testing::expect_chunkings_invariant(hybrid_model(TensorType::Q8_0), 2, 30);
}

TEST(HybridModel, Q4_K_MBatchInvariant) {
  testing::expect_chunkings_invariant(hybrid_model(TensorType::Q4_K, synth::Mix::kQ4_K_M), 2, 30);
}

// gpt-oss's MXFP4_MOE mix: the routed experts through the MXFP4 kernels, the rest Q8_0.
TEST(HybridModel, MXFP4_MOEBatchInvariant) {
  testing::expect_chunkings_invariant(hybrid_model(TensorType::Q8_0, synth::Mix::kMXFP4_MOE), 2,
                                      30);
}

TEST(HybridModel, F32BatchInvariantOnOneThread) {
  testing::expect_chunkings_invariant(hybrid_model(TensorType::F32), 1, 30);
}

TEST(HybridModel, AnotherLayerPatternIsInvariantToo) {
  testing::expect_chunkings_invariant(hybrid_model(TensorType::Q8_0, synth::Mix::kNone, 2), 2, 30);
}

TEST(HybridModel, LoadsTheLayerPatternAndKeepsKvOnlyForAttention) {
  auto every4 = testing::load_engine(hybrid_model(TensorType::Q8_0), 2);
  const auto& h = every4->model().hparams();
  EXPECT_EQ(h.arch, model::Arch::Qwen35Moe);
  EXPECT_STREQ(model::arch_name(h.arch), "qwen35moe");
  EXPECT_EQ(h.recurrent, (std::vector<uint8_t>{1, 1, 1, 0}));
  EXPECT_EQ(h.n_attention_layers(), 1);
  EXPECT_EQ(h.rope_mode, model::RopeMode::Imrope);
  EXPECT_EQ(h.n_rot, 32);
  EXPECT_EQ(h.rope_sections, (std::array<int32_t, 4>{6, 6, 4, 0}));
  EXPECT_EQ(h.ssm.conv_dim(), 2 * 2 * 64 + 4 * 64);  // q and k of 2 key heads, v of 4
  EXPECT_EQ(h.n_ff_shared, 256);
  const auto& w = every4->model().weights();
  EXPECT_TRUE(w.layers[0].recurrent);
  EXPECT_FALSE(w.layers[3].recurrent);
  EXPECT_TRUE(w.layers[3].moe.shared.present());
  EXPECT_EQ(w.layers[3].wq.rows, 2 * 2 * 128);  // [q, gate] per head
  // F16 KV: one attention layer, K and V of one KV head of 128, 16 positions.
  EXPECT_EQ(every4->info().kv_bytes_per_block, 1u * 2 * 128 * 16 * 2);
  // Per DeltaNet layer: 3 inputs of the convolution's 512 channels, 4 matrices of 64 x 64.
  EXPECT_EQ(every4->info().state_bytes_per_seq, 3u * (3 * 512 + 4 * 64 * 64) * 4);
  EXPECT_NE(every4->info().kv_layout.find("pattern=rrra"), std::string::npos);

  auto every2 = testing::load_engine(hybrid_model(TensorType::Q8_0, synth::Mix::kNone, 2), 2);
  EXPECT_EQ(every2->model().hparams().recurrent, (std::vector<uint8_t>{1, 0, 1, 0}));
  EXPECT_EQ(every2->info().kv_bytes_per_block, 2 * every4->info().kv_bytes_per_block);
  EXPECT_NE(every2->info().kv_layout, every4->info().kv_layout);
}

// A state covers a whole prefix: a step may continue a sequence only where it stopped. Any
// other start (a prefix reused from a cache, a position skipped, a released sequence) is
// refused rather than computed from the wrong state.
TEST(HybridModel, RefusesToContinueASequenceFromAnotherPosition) {
  auto eng = testing::load_engine(hybrid_model(TensorType::Q8_0), 2);
  eng->allocate_kv(16);
  const auto p = testing::some_prompt(20, eng->info().n_vocab);
  const std::vector<int32_t> table = {0, 1};
  engine::StepOutput out;
  eng->forward(one_chunk(5, 0, {p.begin(), p.begin() + 10}, table), out);
  auto msg = forward_error(*eng, one_chunk(5, 12, {p[12]}, table));
  EXPECT_NE(msg.find("continues at position 12 but its recurrent state holds 10"),
            std::string::npos)
      << msg;
  msg = forward_error(*eng, one_chunk(6, 4, {p[4]}, {2, 3}));
  EXPECT_NE(msg.find("sequence 6 continues at position 4 but has no recurrent state"),
            std::string::npos)
      << msg;
  // The refused steps changed nothing: the sequence still continues at 10.
  EXPECT_EQ(forward_error(*eng, one_chunk(5, 10, {p.begin() + 10, p.end()}, table)), "(no error)");
  eng->release_sequence(5);
  msg = forward_error(*eng, one_chunk(5, 20, {p[0]}, table));
  EXPECT_NE(msg.find("has no recurrent state"), std::string::npos) << msg;
  // The same sequence twice in one step would update one state twice.
  auto twice = one_chunk(7, 0, {p[0]}, {4});
  twice.seqs.push_back(one_chunk(7, 0, {p[1]}, {5}).seqs[0]);
  msg = forward_error(*eng, twice);
  EXPECT_NE(msg.find("both are sequence 7"), std::string::npos) << msg;
}

// Checkpoints taken inside a step (at positions 16 and 32 of a 40-token chunk) let other
// sequences start from them, over the first sequence's KV blocks: their logits are bit for bit
// the ones of the sequence computed whole. A restore asking for another length, and captures
// outside the slice or the slots, are refused.
TEST(HybridModel, CheckpointsInsideAStepRestoreTheSameState) {
  auto eng = testing::load_engine(hybrid_model(TensorType::Q8_0), 2);
  ASSERT_EQ(eng->info().block_size, 16);
  eng->allocate_kv(16);
  eng->allocate_state_slots(2);
  const auto p = testing::some_prompt(40, eng->info().n_vocab);
  testing::expect_checkpoints_inside_a_step_restore(*eng, p);
  try {
    eng->restore_state(4, 1, 16);
    ADD_FAILURE() << "restored a 32-position state as 16 positions";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("holds 32 positions, not 16"), std::string::npos)
        << e.what();
  }
  auto bad = one_chunk(6, 0, {p.begin(), p.begin() + 8}, {6});
  bad.seqs[0].checkpoints = {{9, 0}};
  EXPECT_NE(forward_error(*eng, bad).find("not inside the slice"), std::string::npos);
  bad.seqs[0].checkpoints = {{8, 2}};
  EXPECT_NE(forward_error(*eng, bad).find("out of range (2 allocated)"), std::string::npos);
  // The refused steps wrote nothing: slot 0 still holds its 16 positions.
  eng->restore_state(7, 0, 16);
}

// Starting again at position 0 clears the state: the second run of a prompt under the same id
// gives the first run's logits.
TEST(HybridModel, PositionZeroStartsAFreshState) {
  auto eng = testing::load_engine(hybrid_model(TensorType::F32), 2);
  eng->allocate_kv(16);
  const auto p = testing::some_prompt(12, eng->info().n_vocab);
  engine::StepOutput first, again;
  eng->forward(one_chunk(3, 0, p, {0}), first);
  eng->forward(one_chunk(3, 0, p, {1}), again);
  ASSERT_EQ(first.logits.size(), 1u);
  EXPECT_TRUE(testing::bit_identical(first.logits[0], again.logits[0]));
}

// One token's delta-rule update against the formula in double: S decays by exp(g), then
// S += k (beta (v - S^T k))^T, and the output is S^T q * scale; at every SIMD level, for a head
// width each level's lanes divide (32) and one none does (5).
void expect_rule_step_matches_formula(kernels::SimdLevel level, int32_t n) {
  std::vector<float> m(n * n), q(n), k(n), v(n), o(n);
  for (int i = 0; i < n * n; ++i) m[i] = std::sin(0.7f * i);
  for (int i = 0; i < n; ++i) {
    q[i] = std::cos(0.3f * i);
    k[i] = 0.2f * (i % 7) - 0.4f;
    v[i] = 1.0f - 0.1f * (i % 11);
  }
  const float g = -0.3f, beta = 0.6f, scale = 0.5f;
  // m[j][i] = S[i][j]
  std::vector<double> S(n * n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) S[i * n + j] = m[j * n + i] * std::exp(double(g));
  }
  std::vector<double> want(n);
  for (int j = 0; j < n; ++j) {
    double sk = 0;
    for (int i = 0; i < n; ++i) sk += S[i * n + j] * k[i];
    const double d = beta * (v[j] - sk);
    for (int i = 0; i < n; ++i) S[i * n + j] += k[i] * d;
    double sq = 0;
    for (int i = 0; i < n; ++i) sq += S[i * n + j] * q[i];
    want[j] = sq * scale;
  }
  model::delta_rule_step_at(level, m.data(), q.data(), k.data(), v.data(), g, beta, scale, n,
                            o.data());
  const char* label = kernels::simd_level_label(level);
  for (int j = 0; j < n; ++j) {
    EXPECT_NEAR(o[j], want[j], 1e-4) << label << " n=" << n << " j=" << j;
    for (int i = 0; i < n; ++i) {
      EXPECT_NEAR(m[j * n + i], S[i * n + j], 1e-5) << label << " " << i << "," << j;
    }
  }
}

TEST(DeltaNet, RuleStepMatchesTheFormula) {
  for (auto level :
       {kernels::SimdLevel::Scalar, kernels::SimdLevel::Avx2, kernels::SimdLevel::Avx512}) {
    for (int32_t n : {5, 32}) expect_rule_step_matches_formula(level, n);
  }
}

// IMRoPE with sections [6, 6, 4, 0] over 16 pairs (llama.cpp's interleave): pairs take t, h, w
// in turn while each section lasts; pair 14 (w's turn, past its 4 x 3) falls to the fourth
// section, where text tokens sit at position 0, so it never turns. The rest turn as NEOX pairs.
TEST(HybridRope, ImropeLeavesTheFourthSectionsPairsUnturned) {
  model::HParams h;
  h.head_dim = 128;
  h.n_rot = 32;
  h.rope_base = 10000.0f;
  h.rope_mode = model::RopeMode::Imrope;
  h.rope_sections = {6, 6, 4, 0};
  model::Rope rope(h, {});
  ASSERT_EQ(rope.n_pairs(), 16);
  std::vector<float> c(16), s(16);
  rope.angles(40, c.data(), s.data());
  for (int32_t i = 0; i < 16; ++i) {
    if (i == 14) {
      EXPECT_EQ(c[i], 1.0f);
      EXPECT_EQ(s[i], 0.0f);
    } else {
      EXPECT_NEAR(c[i], std::cos(40.0 * std::pow(10000.0, -2.0 * i / 32)), 1e-6) << i;
    }
  }
  // NEOX pairs (i, i + 16) of the first 32 dims; dims 32.. untouched.
  std::vector<float> v(128, 1.0f);
  rope.apply(v.data(), 1, c.data(), s.data());
  EXPECT_EQ(v[14], 1.0f);
  EXPECT_EQ(v[30], 1.0f);
  EXPECT_NE(v[0], 1.0f);
  EXPECT_NE(v[16], 1.0f);
  for (int i = 32; i < 128; ++i) EXPECT_EQ(v[i], 1.0f) << i;
}

// The types `baton gguf synth` writes load as a qwen35moe and follow the F32 model, far closer
// than another model of the same shape. A hybrid follows less closely than qwen3moe does
// (MoeModel.EveryWrittenTypeRuns): a router that picks another expert near a tie changes the
// DeltaNet states, and with them every later position (llama.cpp's own Q8_0 file of the
// reference model is at cosine 0.97 to its F32 file at this position, Q4_K_M at 0.94).
TEST(HybridModel, WrittenTypesRunAndFollowF32) {
  struct Case {
    TensorType type;
    synth::Mix mix;
    double min_cosine;
  };
  // Measured: F16 1.000, Q8_0 0.902, Q6_K 0.950, Q4_K_M 0.632, MXFP4_MOE 0.839; another seed's
  // F32 model -0.01.
  const Case cases[] = {{TensorType::F16, synth::Mix::kNone, 0.999},
                        {TensorType::Q8_0, synth::Mix::kNone, 0.8},
                        {TensorType::Q6_K, synth::Mix::kNone, 0.85},
                        {TensorType::Q4_K, synth::Mix::kQ4_K_M, 0.5},
                        {TensorType::Q8_0, synth::Mix::kMXFP4_MOE, 0.7}};
  const auto ref = testing::first_logits(hybrid_model(TensorType::F32));
  const double unrelated = testing::cosine(
      ref, testing::first_logits(hybrid_model(TensorType::F32, synth::Mix::kNone, 4, 8)));
  std::printf("[ measure  ] another seed: cosine to F32 %.4f\n", unrelated);
  EXPECT_LE(unrelated, 0.3);
  for (const auto& c : cases) {
    const auto path = hybrid_model(c.type, c.mix);
    auto f = gguf::GgufFile::open(path);
    EXPECT_EQ(f->find_tensor("blk.0.ssm_conv1d.weight")->type, TensorType::F32) << path;
    EXPECT_EQ(f->find_tensor("blk.0.attn_qkv.weight")->type, c.type) << path;
    if (c.mix == synth::Mix::kMXFP4_MOE) {
      // gpt-oss's layout on the hybrid: the routed experts in MXFP4, the shared expert Q8_0.
      EXPECT_EQ(f->find_tensor("blk.0.ffn_up_exps.weight")->type, TensorType::MXFP4) << path;
      EXPECT_EQ(f->find_tensor("blk.0.ffn_up_shexp.weight")->type, TensorType::Q8_0) << path;
    }
    const auto logits = testing::first_logits(path);
    ASSERT_EQ(logits.size(), ref.size());
    for (float v : logits) ASSERT_TRUE(std::isfinite(v));
    const double cos = testing::cosine(ref, logits);
    std::printf("[ measure  ] %s: cosine to F32 %.4f\n", path.c_str(), cos);
    EXPECT_GE(cos, c.min_cosine) << path;
  }
}

}  // namespace
}  // namespace baton
