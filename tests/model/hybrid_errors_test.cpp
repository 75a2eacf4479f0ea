// Hybrid (qwen35moe, and qwen3next's old layout) files the engine must refuse at load, with one
// line that names the key or tensor and the fix: DeltaNet sizes that disagree with each other or
// with the tensors, layer patterns baton does not know or that disagree with the tensors.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>

#include "gguf/gguf_writer.h"
#include "gguf_rewrite.h"
#include "load_error.h"
#include "support/shared_files.h"
#include "synth/synth_model.h"

namespace baton {
namespace {

using testing::expect_refused;
using testing::load_error;

// 4 layers (DeltaNet 0-2, attention 3), DeltaNet heads of 16: q|k|v 2 x 2 x 16 + 4 x 16 = 128.
std::string hybrid_base(const std::filesystem::path& dir, const std::string& arch = "qwen35moe") {
  synth::SynthSpec spec;
  spec.arch = arch;
  spec.embd = 64;
  spec.layers = 4;
  spec.heads = 2;
  spec.kv_heads = 1;
  spec.head_dim = 32;
  spec.experts = 4;
  spec.experts_used = 2;
  spec.expert_ff = 32;
  spec.ssm_k_heads = 2;
  spec.ssm_v_heads = 4;
  spec.ssm_head_dim = 16;
  spec.threads = 1;
  const auto path = (dir / (arch + "-base.gguf")).string();
  synth::write_synthetic_model(spec, path);
  return path;
}

class HybridErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::scratch_dir();
    base_ = hybrid_base(dir_);
  }
  // The base file with `edit` applied to its metadata, without the key `drop`, and with the
  // tensors `keep` accepts; what loading it says.
  std::string bad(const std::function<void(gguf::GgufWriter&)>& edit, const std::string& drop = "",
                  const std::function<bool(const gguf::TensorInfo&)>& keep = nullptr) {
    const auto path = (dir_ / "bad.gguf").string();
    testing::rewrite(base_, path, edit, keep, nullptr, drop);
    return load_error(path);
  }
  std::filesystem::path dir_;
  std::string base_;
};

TEST_F(HybridErrors, BaseLoads) {
  EXPECT_EQ(load_error(base_), "(no error)");
}

// Keys that agree with each other but not with the tensors: the shape error names the keys.
TEST_F(HybridErrors, StateSizeDisagreesWithTensors) {
  const auto msg = bad([](auto& w) {
    w.set_u32("qwen35moe.ssm.state_size", 8);
    w.set_u32("qwen35moe.ssm.inner_size", 32);
  });
  expect_refused(msg, {"blk.0.attn_qkv.weight has shape [64, 128], expected [64, 64]",
                       "qwen35moe.ssm.state_size 8", "ssm keys disagree with its tensors"});
}

TEST_F(HybridErrors, ConvKernelDisagreesWithTensors) {
  const auto msg = bad([](auto& w) { w.set_u32("qwen35moe.ssm.conv_kernel", 3); });
  expect_refused(msg, {"blk.0.ssm_conv1d.weight has shape [4, 128], expected [3, 128]",
                       "qwen35moe.ssm.conv_kernel 3"});
}

TEST_F(HybridErrors, InnerSizeIsNotValueHeadsTimesStateSize) {
  const auto msg = bad([](auto& w) { w.set_u32("qwen35moe.ssm.inner_size", 100); });
  expect_refused(msg, {"qwen35moe.ssm.inner_size 100 is not", "= 64", "set ssm.inner_size to 64"});
}

TEST_F(HybridErrors, ValueHeadsNotAMultipleOfKeyHeads) {
  const auto msg = bad([](auto& w) {
    w.set_u32("qwen35moe.ssm.time_step_rank", 3);
    w.set_u32("qwen35moe.ssm.inner_size", 48);
  });
  expect_refused(
      msg, {"qwen35moe.ssm.time_step_rank 3", "not a multiple of", "qwen35moe.ssm.group_count 2"});
}

TEST_F(HybridErrors, MissingOrZeroSsmKey) {
  expect_refused(bad([](auto&) {}, "qwen35moe.ssm.conv_kernel"),
                 {"required key qwen35moe.ssm.conv_kernel is missing", "llama.cpp"});
  expect_refused(bad([](auto& w) { w.set_u32("qwen35moe.ssm.state_size", 0); }),
                 {"qwen35moe.ssm.state_size = 0 is out of range"});
}

TEST_F(HybridErrors, UnknownLayerPatterns) {
  expect_refused(
      bad([](auto& w) { w.set_u32("qwen35moe.full_attention_interval", 0); }),
      {"qwen35moe.full_attention_interval = 0 is not a layer pattern baton knows", "1..4"});
  expect_refused(
      bad([](auto& w) {
        w.set_i32s("qwen35moe.attention.recurrent_layers", {1, 1, 0});
      }),
      {"qwen35moe.attention.recurrent_layers has 3 entries but qwen35moe.block_count is 4",
       "one flag per layer"});
  expect_refused(bad([](auto& w) {
                   w.set_i32s("qwen35moe.attention.recurrent_layers", {1, 1, 1, 1});
                 }),
                 {"every one of the 4 layers is recurrent", "at least one attention layer"});
  expect_refused(bad([](auto& w) {
                   w.set_strings("qwen35moe.attention.recurrent_layers", {"a", "b", "c", "d"});
                 }),
                 {"qwen35moe.attention.recurrent_layers", "array of integers"});
}

// A pattern that is valid but not the file's: the tensors of layer 1 are DeltaNet's.
TEST_F(HybridErrors, LayerPatternDisagreesWithTensors) {
  const auto msg = bad([](auto& w) { w.set_u32("qwen35moe.full_attention_interval", 2); });
  expect_refused(msg, {"layer 1 is attention by the layer pattern", "blk.1.attn_qkv.weight",
                       "instead of blk.1.attn_q.weight", "fix the key"});
  const auto flags = bad([](auto& w) {
    w.set_i32s("qwen35moe.attention.recurrent_layers", {1, 1, 1, 1, 0});
  });
  expect_refused(flags, {"has 5 entries"});
}

// The same pattern given as flags loads.
TEST_F(HybridErrors, PatternAsFlagsLoads) {
  EXPECT_EQ(bad([](auto& w) {
              w.set_i32s("qwen35moe.attention.recurrent_layers", {1, 1, 1, 0});
            }),
            "(no error)");
}

TEST_F(HybridErrors, MissingSectionsOrDeltaNetTensor) {
  expect_refused(bad([](auto&) {}, "qwen35moe.rope.dimension_sections"),
                 {"qwen35moe.rope.dimension_sections is missing"});
  expect_refused(bad([](auto& w) {
                   w.set_i32s("qwen35moe.rope.dimension_sections", {2, 2});
                 }),
                 {"qwen35moe.rope.dimension_sections has 2 entries, expected 4"});
  expect_refused(
      bad([](auto&) {}, "", [](const gguf::TensorInfo& t) { return t.name != "blk.2.ssm_a"; }),
      {"tensor blk.2.ssm_a is missing"});
}

TEST_F(HybridErrors, SharedExpertWidthDisagreesWithKey) {
  const auto msg =
      bad([](auto& w) { w.set_u32("qwen35moe.expert_shared_feed_forward_length", 64); });
  expect_refused(msg, {"blk.0.ffn_gate_shexp.weight has 32 rows",
                       "qwen35moe.expert_shared_feed_forward_length is 64", "set the key to 32"});
}

// A qwen3next file of the layout converters wrote before January 2026 (q, k, v and z of each key
// head interleaved in one ssm_in matrix) is refused with the fix, not misread.
TEST(HybridLegacyLayout, Qwen3NextSsmInIsRefused) {
  const auto dir = testing::scratch_dir();
  auto f = gguf::GgufFile::open(hybrid_base(dir, "qwen3next"));
  EXPECT_EQ(load_error(f->path()), "(no error)");
  gguf::GgufWriter w;
  for (const auto& [k, v] : f->metadata()) w.set_value(k, v);
  for (const auto& t : f->tensors()) {
    if (t.name == "blk.0.attn_gate.weight") continue;
    const std::string name = t.name == "blk.0.attn_qkv.weight" ? "blk.0.ssm_in.weight" : t.name;
    const uint8_t* d = f->tensor_data(t);
    w.add_tensor(name, t.type, t.dims, std::vector<uint8_t>(d, d + t.n_bytes));
  }
  const auto legacy = (dir / "qwen3next-legacy.gguf").string();
  w.write(legacy);
  expect_refused(load_error(legacy),
                 {"blk.0.ssm_in.weight", "before January 2026", "convert the model again"});
}

}  // namespace
}  // namespace baton
