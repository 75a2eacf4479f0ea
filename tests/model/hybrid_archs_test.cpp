// The other hybrid architectures beside qwen35moe: qwen35 (Qwen3.5 0.8B-27B: dense SiLU FFNs in
// every layer) and qwen3next (Qwen3-Next, Qwen3-Coder-Next: neox rope on the attention layers,
// value heads grouped by key head, beta and alpha in one matrix). Their synthetic files against
// llama.cpp's logits on the same files (tests/model/data, made with llama.cpp's CPU backend from
// `baton gguf synth` files of hybrid_spec's shape, all positions in one batch), and the
// qwen35moe reference file on a prompt long enough for several of llama.cpp's delta-rule chunks.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "hybrid_spec.h"
#include "invariance.h"
#include "reference_logits.h"
#include "support/shared_files.h"

namespace baton {
namespace {

using gguf::TensorType;
using testing::ArchCase;
using testing::hybrid_model;

std::filesystem::path data_file(const std::string& name) {
  return std::filesystem::path(BATON_SOURCE_DIR) / "tests" / "model" / "data" / name;
}

TEST(HybridArchs, Qwen35LoadsDenseFfnsBetweenDeltaNetLayers) {
  auto eng =
      testing::load_engine(hybrid_model(TensorType::Q8_0, synth::Mix::kNone, 4, 7, "qwen35"), 2);
  const auto& h = eng->model().hparams();
  EXPECT_EQ(h.arch, model::Arch::Qwen35);
  EXPECT_STREQ(model::arch_name(h.arch), "qwen35");
  EXPECT_FALSE(h.is_moe());
  EXPECT_EQ(h.recurrent, (std::vector<uint8_t>{1, 1, 1, 0}));
  EXPECT_EQ(h.rope_mode, model::RopeMode::Imrope);
  EXPECT_FALSE(h.ssm.v_heads_grouped);
  EXPECT_TRUE(h.gated_attention());
  for (const auto& l : eng->model().weights().layers) {
    EXPECT_EQ(l.ffn, model::FfnKind::Dense);
    EXPECT_EQ(l.w_gate.rows, 256);
  }
}

TEST(HybridArchs, Qwen3NextLoadsItsOwnLayout) {
  auto eng =
      testing::load_engine(hybrid_model(TensorType::Q8_0, synth::Mix::kNone, 4, 7, "qwen3next"), 2);
  const auto& h = eng->model().hparams();
  EXPECT_EQ(h.arch, model::Arch::Qwen3Next);
  EXPECT_EQ(h.rope_mode, model::RopeMode::Neox);
  EXPECT_EQ(h.n_rot, 32);
  EXPECT_TRUE(h.ssm.v_heads_grouped);
  // 4 value heads over 2 key heads, grouped: value heads 0 and 1 read key head 0.
  EXPECT_EQ(h.ssm.key_head(1), 0);
  EXPECT_EQ(h.ssm.key_head(2), 1);
  const auto& w = eng->model().weights();
  EXPECT_EQ(w.layers[0].dnet.beta_alpha.rows, 8);
  EXPECT_EQ(w.layers[0].dnet.beta.rows, 0);
  EXPECT_TRUE(w.layers[3].moe.shared.present());
  EXPECT_EQ(w.layers[3].wq.rows, 2 * 2 * 128);  // [q, gate] per head
}

TEST(HybridArchs, Qwen35BatchInvariant) {
  testing::expect_chunkings_invariant(
      hybrid_model(TensorType::Q8_0, synth::Mix::kNone, 4, 7, "qwen35"), 2, 31);
  testing::expect_chunkings_invariant(
      hybrid_model(TensorType::Q4_K, synth::Mix::kQ4_K_M, 4, 7, "qwen35"), 2, 32);
}

TEST(HybridArchs, Qwen3NextBatchInvariant) {
  testing::expect_chunkings_invariant(
      hybrid_model(TensorType::Q8_0, synth::Mix::kNone, 4, 7, "qwen3next"), 2, 33);
}

// A synthetic file and the reference llama.cpp computed on it.
struct SynthCase {
  ArchCase bounds;  // bounds.file: ARCH-TYPE, the reference's name
  const char* arch;
  TensorType type;
};

void PrintTo(const SynthCase& c, std::ostream* os) {
  *os << c.bounds.file;
}

class HybridArchReference : public ::testing::TestWithParam<SynthCase> {};

TEST_P(HybridArchReference, TopLogprobsMatchLlamaCpp) {
  const SynthCase c = GetParam();
  const auto ref_path = data_file(std::string(c.bounds.file) + ".logits");
  const auto ref = testing::read_reference(ref_path);
  ASSERT_FALSE(ref.ids.empty()) << ref_path << " is missing or malformed";
  auto eng = testing::load_engine(hybrid_model(c.type, synth::Mix::kNone, 4, 7, c.arch), 2);
  testing::expect_matches_reference(c.bounds, *eng, ref);
}

std::string synth_label(const ::testing::TestParamInfo<SynthCase>& i) {
  return testing::test_label(i.param.bounds.file);
}

// Measured at avx512-vnni, avx2 and scalar (top-5 error / above the bound / median): qwen35 F32
// 0.00001-0.00003 / 0 / 0.00001, Q8_0 0.033-0.035 / 0 / 0.010; qwen3next F32 0.00001-0.00002 / 0 /
// 0.00001, Q8_0 0.016-0.056 / 0 / 0.012. The F32 bounds leave no room for a wrong head pairing,
// rope or beta/alpha split.
INSTANTIATE_TEST_SUITE_P(
    Files, HybridArchReference,
    ::testing::Values(
        SynthCase{{"qwen35-F32", 0.008, 0, 0.008, 0.004}, "qwen35", TensorType::F32},
        SynthCase{{"qwen35-Q8_0", 0.1, 2, 1.0, 0.04}, "qwen35", TensorType::Q8_0},
        SynthCase{{"qwen3next-F32", 0.008, 0, 0.008, 0.004}, "qwen3next", TensorType::F32},
        SynthCase{{"qwen3next-Q8_0", 0.1, 2, 1.0, 0.04}, "qwen3next", TensorType::Q8_0}),
    synth_label);

// The qwen35moe reference files on a 320-token prompt (random ids), every 8th position and the
// last: llama.cpp splits the prompt into delta-rule chunks of 64, baton updates the state token
// by token, so a wrong chunk boundary or decay across chunks shows in the later positions. The
// quantized files' references were made the same way from ../shared's Q8_0 and Q4_K_M files.
// Measured at avx512-vnni, avx2 and scalar (top-5 error without flips / flips / worst / median):
// F32 0.00001-0.00002 / 0 / 0.00002 / 0.00001; Q8_0 0.074-0.083 / 3-4 / 0.51 (a router flip at
// position 264, scalar only) / 0.032; Q4_K_M 0.054-0.073 / 0 / 0.073 / 0-0.028. For scale:
// llama.cpp's own Q8_0 against its F32 on this prompt is 0.148 at the median, Q4_K_M 1.04; the
// errors do not grow along the prompt, so the state carries no drift across chunks.
struct LongCase {
  ArchCase bounds;  // bounds.file: the reference's name
  const char* model;
};

void PrintTo(const LongCase& c, std::ostream* os) {
  *os << c.bounds.file;
}

class Qwen35MoeLongPrompt : public ::testing::TestWithParam<LongCase> {};

TEST_P(Qwen35MoeLongPrompt, MatchesLlamaCpp) {
  const LongCase c = GetParam();
  BATON_REQUIRE_SHARED(model, std::string("models/arch/") + c.model);
  const auto ref_path = data_file(std::string(c.bounds.file) + ".logits");
  const auto ref = testing::read_reference(ref_path);
  ASSERT_FALSE(ref.ids.empty()) << ref_path << " is missing or malformed";
  auto eng = testing::load_engine(model.string(), 2);
  testing::expect_matches_reference(c.bounds, *eng, ref);
}

std::string long_label(const ::testing::TestParamInfo<LongCase>& i) {
  return testing::test_label(i.param.bounds.file);
}

INSTANTIATE_TEST_SUITE_P(Files, Qwen35MoeLongPrompt,
                         ::testing::Values(LongCase{{"qwen35moe-F32-long", 0.01, 0, 0.01, 0.005},
                                                    "synth-qwen35moe-F32.gguf"},
                                           LongCase{{"qwen35moe-Q8_0-long", 0.085, 4, 1.0, 0.04},
                                                    "synth-qwen35moe-Q8_0.gguf"},
                                           LongCase{{"qwen35moe-Q4_K_M-long", 0.085, 2, 1.0, 0.04},
                                                    "synth-qwen35moe-Q4_K_M.gguf"}),
                         long_label);

}  // namespace
}  // namespace baton
