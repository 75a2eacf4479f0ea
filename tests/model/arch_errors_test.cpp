// gemma3 and mistral3 files the engine must refuse at load, with one line that names the key or
// tensor and the fix.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <limits>
#include <string>

#include "engine/llama_engine.h"
#include "gguf/gguf_writer.h"
#include "gguf_rewrite.h"
#include "load_error.h"
#include "support/shared_files.h"
#include "synth/synth_model.h"

namespace baton {
namespace {

using testing::expect_refused;
using testing::load_error;

class ArchErrors : public ::testing::Test {
 protected:
  void make(const std::string& arch) {
    dir_ = testing::scratch_dir();
    synth::SynthSpec spec;
    spec.arch = arch;
    spec.embd = 64;
    spec.layers = 2;
    spec.heads = 2;
    spec.kv_heads = 1;
    spec.head_dim = 32;
    spec.ff = 64;
    spec.swa = 8;
    spec.threads = 1;
    base_ = (dir_ / "base.gguf").string();
    synth::write_synthetic_model(spec, base_);
  }
  std::string bad(
      const std::function<void(gguf::GgufWriter&)>& edit,
      const std::function<bool(const gguf::TensorInfo&)>& keep = nullptr,
      const std::function<bool(const gguf::TensorInfo&, std::vector<uint64_t>&)>& reshape = nullptr,
      const std::string& drop = "") {
    const auto path = (dir_ / "bad.gguf").string();
    testing::rewrite(base_, path, edit, keep, reshape, drop);
    return load_error(path);
  }
  std::string without(const std::string& tensor) {
    return bad([](auto&) {}, [tensor](const gguf::TensorInfo& t) { return t.name != tensor; });
  }
  std::string without_key(const std::string& key) {
    return bad([](auto&) {}, nullptr, nullptr, key);
  }
  std::filesystem::path dir_;
  std::string base_;
};

class Gemma3Errors : public ArchErrors {
 protected:
  void SetUp() override { make("gemma3"); }
};

class Mistral3Errors : public ArchErrors {
 protected:
  void SetUp() override { make("mistral3"); }
};

TEST_F(Gemma3Errors, BaseLoads) {
  EXPECT_EQ(load_error(base_), "(no error)");
}

TEST_F(Gemma3Errors, MissingNormsNameWhatTheyAreFor) {
  expect_refused(without("blk.1.post_attention_norm.weight"),
                 {"blk.1.post_attention_norm.weight is missing", "norm of the attention's output",
                  "convert it again"});
  expect_refused(without("blk.0.post_ffw_norm.weight"),
                 {"blk.0.post_ffw_norm.weight is missing", "norm of the feed-forward's output"});
  expect_refused(without("blk.0.attn_k_norm.weight"), {"blk.0.attn_k_norm.weight is missing"});
}

TEST_F(Gemma3Errors, PostNormOfTheWrongSize) {
  const auto msg = bad([](auto&) {}, nullptr,
                       [](const gguf::TensorInfo& t, auto& dims) {
                         dims = {3};
                         return t.name == "blk.1.post_ffw_norm.weight";
                       });
  expect_refused(msg, {"blk.1.post_ffw_norm.weight has shape [3], expected [64]"});
}

// A window pattern that is no period (a string, a float, out of range) is refused; an array is
// ignored, as llama.cpp does (Gemma3.KeysOverrideTheDefaults).
TEST_F(Gemma3Errors, UnknownWindowPattern) {
  const char* key = "gemma3.attention.sliding_window_pattern";
  expect_refused(bad([key](auto& w) { w.set_string(key, "5:1"); }),
                 {"gemma3.attention.sliding_window_pattern is not an integer",
                  "set it to an integer or remove it for the default period 6"});
  expect_refused(bad([key](auto& w) { w.set_f32(key, 6.0f); }),
                 {"gemma3.attention.sliding_window_pattern is not an integer"});
  expect_refused(bad([key](auto& w) { w.set_i32(key, -1); }),
                 {"gemma3.attention.sliding_window_pattern = -1 is out of range", "0.."});
}

TEST_F(Gemma3Errors, BadWindowRopeAndSoftcapKeys) {
  expect_refused(bad([](auto& w) { w.set_i32("gemma3.attention.sliding_window", -4); }),
                 {"gemma3.attention.sliding_window = -4 is out of range"});
  expect_refused(
      bad([](auto& w) { w.set_f32("gemma3.rope.freq_base_swa", 0.0f); }),
      {"gemma3.rope.freq_base_swa = 0 is out of range", "local layers' rope base", "must be > 0"});
  expect_refused(bad([](auto& w) { w.set_f32("gemma3.final_logit_softcapping", -30.0f); }),
                 {"gemma3.final_logit_softcapping = -30 is out of range", "must be >= 0"});
}

TEST_F(Gemma3Errors, MissingNormEpsilon) {
  expect_refused(without_key("gemma3.attention.layer_norm_rms_epsilon"),
                 {"gemma3.attention.layer_norm_rms_epsilon is missing", "convert the model again"});
}

TEST_F(Mistral3Errors, BaseLoads) {
  EXPECT_EQ(load_error(base_), "(no error)");
}

TEST_F(Mistral3Errors, ExpertsAreRefused) {
  expect_refused(bad([](auto& w) { w.set_u32("mistral3.expert_count", 8); }),
                 {"mistral3.expert_count is set", "mixture-of-experts mistral3", "not supported"});
}

TEST_F(Mistral3Errors, PartialRotationIsRefused) {
  expect_refused(bad([](auto& w) { w.set_u32("mistral3.rope.dimension_count", 16); }),
                 {"mistral3.rope.dimension_count 16 differs from the head dimension 32"});
}

TEST_F(Mistral3Errors, BadYarnAndTemperatureKeys) {
  expect_refused(bad([](auto& w) { w.set_f32("mistral3.rope.scaling.yarn_beta_fast", 0.0f); }),
                 {"mistral3.rope.scaling.yarn_beta_fast = 0 is out of range", "must be > 0"});
  expect_refused(
      bad([](auto& w) { w.set_f32("mistral3.rope.scaling.yarn_log_multiplier", -1.0f); }),
      {"mistral3.rope.scaling.yarn_log_multiplier = -1 is out of range"});
  expect_refused(bad([](auto& w) {
                   w.set_f32("mistral3.attention.temperature_scale",
                             std::numeric_limits<float>::quiet_NaN());
                 }),
                 {"mistral3.attention.temperature_scale = nan is out of range"});
}

TEST_F(Mistral3Errors, MissingNormEpsilon) {
  expect_refused(without_key("mistral3.attention.layer_norm_rms_epsilon"),
                 {"mistral3.attention.layer_norm_rms_epsilon is missing"});
}

}  // namespace
}  // namespace baton
