// Mixture-of-experts files the engine must refuse at load, with one line that names the key or
// tensor and the fix.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>

#include "engine/llama_engine.h"
#include "gguf/gguf_writer.h"
#include "gguf_rewrite.h"
#include "load_error.h"
#include "support/shared_files.h"
#include "synth/synth_model.h"
#include "tiny_gpt_oss.h"

namespace baton {
namespace {

std::string moe_base(const std::filesystem::path& dir) {
  synth::SynthSpec spec;
  spec.arch = "qwen3moe";
  spec.embd = 64;
  spec.layers = 2;
  spec.heads = 2;
  spec.kv_heads = 2;
  spec.experts = 4;
  spec.experts_used = 2;
  spec.expert_ff = 32;
  spec.threads = 1;
  const auto path = (dir / "base.gguf").string();
  synth::write_synthetic_model(spec, path);
  return path;
}

using testing::expect_refused;
using testing::load_error;
using testing::rewrite;

class MoeErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::scratch_dir();
    base_ = moe_base(dir_);
  }
  std::string bad(const std::function<void(gguf::GgufWriter&)>& edit,
                  const std::function<bool(const gguf::TensorInfo&)>& keep = nullptr) {
    const auto path = (dir_ / "bad.gguf").string();
    rewrite(base_, path, edit, keep);
    return load_error(path);
  }
  std::filesystem::path dir_;
  std::string base_;
};

TEST_F(MoeErrors, BaseLoads) {
  EXPECT_EQ(load_error(base_), "(no error)");
}

TEST_F(MoeErrors, RouterDisagreesWithExpertCount) {
  const auto msg = bad([](auto& w) { w.set_u32("qwen3moe.expert_count", 6); });
  expect_refused(msg, {"blk.0.ffn_gate_inp.weight routes to 4 experts",
                       "qwen3moe.expert_count is 6", "set the key to 4"});
}

TEST_F(MoeErrors, ExpertTensorDisagreesWithRouter) {
  // The router of layer 1 is rebuilt for 6 experts along with the key; its experts hold 4.
  const auto path = (dir_ / "bad.gguf").string();
  rewrite(
      base_, path, [](auto& w) { w.set_u32("qwen3moe.expert_count", 6); }, nullptr,
      [](const gguf::TensorInfo& t, std::vector<uint64_t>& dims) {
        dims = {t.dims[0], 6};
        return t.name.find("ffn_gate_inp") != std::string::npos;
      });
  expect_refused(load_error(path), {"blk.0.ffn_gate_exps.weight holds 4 experts",
                                    "qwen3moe.expert_count is 6", "set the key to 4"});
}

TEST_F(MoeErrors, MissingExpertTensor) {
  const auto msg =
      bad([](auto&) {},
          [](const gguf::TensorInfo& t) { return t.name != "blk.1.ffn_down_exps.weight"; });
  expect_refused(msg, {"blk.1.ffn_down_exps.weight is missing", "mixture-of-experts"});
}

TEST_F(MoeErrors, MissingRouter) {
  const auto msg =
      bad([](auto&) {},
          [](const gguf::TensorInfo& t) { return t.name != "blk.0.ffn_gate_inp.weight"; });
  expect_refused(msg, {"blk.0.ffn_gate_inp.weight is missing", "router"});
}

TEST_F(MoeErrors, ExpertsUsedZeroOrAboveCount) {
  expect_refused(bad([](auto& w) { w.set_u32("qwen3moe.expert_used_count", 0); }),
                 {"qwen3moe.expert_used_count = 0 is out of range", "1..4"});
  expect_refused(
      bad([](auto& w) { w.set_u32("qwen3moe.expert_used_count", 5); }),
      {"qwen3moe.expert_used_count = 5 is out of range", "1..4", "qwen3moe.expert_count = 4"});
}

TEST_F(MoeErrors, MissingExpertCountKey) {
  const auto path = (dir_ / "bad.gguf").string();
  rewrite(
      base_, path, [](auto&) {}, nullptr, nullptr, "qwen3moe.expert_count");
  expect_refused(load_error(path), {"qwen3moe.expert_count is missing"});
}

TEST_F(MoeErrors, ExpertWidthDisagreesWithKey) {
  expect_refused(bad([](auto& w) { w.set_u32("qwen3moe.expert_feed_forward_length", 64); }),
                 {"blk.0.ffn_gate_exps.weight has experts of 32 rows",
                  "qwen3moe.expert_feed_forward_length is 64", "set the key to 32"});
}

// A 2-D tensor where a 3-D one belongs is refused by shape, not read out of bounds.
TEST_F(MoeErrors, FlatExpertTensor) {
  const auto path = (dir_ / "bad.gguf").string();
  rewrite(
      base_, path, [](auto&) {}, nullptr,
      [](const gguf::TensorInfo& t, std::vector<uint64_t>& dims) {
        if (t.name != "blk.0.ffn_up_exps.weight") return false;
        dims = {t.dims[0], t.dims[1] * t.dims[2]};
        return true;
      });
  expect_refused(load_error(path),
                 {"blk.0.ffn_up_exps.weight has shape [64, 128]", "expected [64, 32, 4]"});
}

// gpt-oss files: the tensors and keys its layers need beyond qwen3moe's.
class GptOssErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::scratch_dir();
    const auto spec = testing::tiny_gpt_oss_spec(2, 8, 1);
    base_ = (dir_ / "base.gguf").string();
    synth::write_synthetic_model(spec, base_);
  }
  std::string bad(
      const std::function<void(gguf::GgufWriter&)>& edit,
      const std::function<bool(const gguf::TensorInfo&)>& keep = nullptr,
      const std::function<bool(const gguf::TensorInfo&, std::vector<uint64_t>&)>& reshape = nullptr,
      const std::string& drop = "") {
    const auto path = (dir_ / "bad.gguf").string();
    rewrite(base_, path, edit, keep, reshape, drop);
    return load_error(path);
  }
  std::string without(const std::string& tensor) {
    return bad([](auto&) {}, [tensor](const gguf::TensorInfo& t) { return t.name != tensor; });
  }
  std::filesystem::path dir_;
  std::string base_;
};

TEST_F(GptOssErrors, BaseLoads) {
  EXPECT_EQ(load_error(base_), "(no error)");
}

TEST_F(GptOssErrors, SinksOfTheWrongSize) {
  const auto msg = bad([](auto&) {}, nullptr,
                       [](const gguf::TensorInfo& t, auto& dims) {
                         dims = {3};
                         return t.name == "blk.1.attn_sinks.weight";
                       });
  expect_refused(msg, {"blk.1.attn_sinks.weight has shape [3], expected [4]",
                       "gpt-oss.attention.head_count = 4", "use a consistent file"});
}

TEST_F(GptOssErrors, MissingTensorsNameWhatTheyAreFor) {
  expect_refused(without("blk.0.attn_sinks.weight"),
                 {"blk.0.attn_sinks.weight is missing", "attention sinks", "convert it again"});
  expect_refused(
      without("blk.1.post_attention_norm.weight"),
      {"blk.1.post_attention_norm.weight is missing", "norm before the layer's experts"});
  expect_refused(without("blk.0.attn_output.bias"),
                 {"blk.0.attn_output.bias is missing", "attention output's bias"});
  expect_refused(without("blk.0.ffn_gate_inp.bias"),
                 {"blk.0.ffn_gate_inp.bias is missing", "router's bias"});
  expect_refused(without("blk.1.ffn_down_exps.bias"),
                 {"blk.1.ffn_down_exps.bias is missing", "experts' down biases"});
  expect_refused(without("blk.0.ffn_up_exps.weight"),
                 {"blk.0.ffn_up_exps.weight is missing", "mixture-of-experts"});
}

TEST_F(GptOssErrors, ExpertBiasOfTheWrongShape) {
  const auto msg = bad([](auto&) {}, nullptr,
                       [](const gguf::TensorInfo& t, auto& dims) {
                         dims = {32, 3};
                         return t.name == "blk.0.ffn_gate_exps.bias";
                       });
  expect_refused(msg, {"blk.0.ffn_gate_exps.bias has shape [32, 3], expected [32, 4]"});
}

TEST_F(GptOssErrors, WindowKeyMissingOrZero) {
  expect_refused(
      bad([](auto&) {}, nullptr, nullptr, "gpt-oss.attention.sliding_window"),
      {"gpt-oss.attention.sliding_window is missing", "sliding window", "convert the model again"});
  expect_refused(bad([](auto& w) { w.set_u32("gpt-oss.attention.sliding_window", 0); }),
                 {"gpt-oss.attention.sliding_window = 0 is out of range"});
}

TEST_F(GptOssErrors, ExpertsUsedAboveCount) {
  expect_refused(
      bad([](auto& w) { w.set_u32("gpt-oss.expert_used_count", 5); }),
      {"gpt-oss.expert_used_count = 5 is out of range", "1..4", "gpt-oss.expert_count = 4"});
}

}  // namespace
}  // namespace baton
