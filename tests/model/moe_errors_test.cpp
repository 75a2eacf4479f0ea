// Mixture-of-experts files the engine must refuse at load, with one line that names the key or
// tensor and the fix.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>

#include "engine/llama_engine.h"
#include "gguf/gguf_writer.h"
#include "load_error.h"
#include "support/shared_files.h"
#include "synth/synth_model.h"

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

// Copies `from` to `to` after `edit` adjusts the metadata; `keep` filters tensors.
void rewrite(const std::string& from, const std::string& to,
             const std::function<void(gguf::GgufWriter&)>& edit,
             const std::function<bool(const gguf::TensorInfo&)>& keep = nullptr) {
  auto f = gguf::GgufFile::open(from);
  gguf::GgufWriter w;
  w.copy_metadata(*f, "");
  edit(w);
  for (const auto& t : f->tensors()) {
    if (keep && !keep(t)) continue;
    const uint8_t* d = f->tensor_data(t);
    w.add_tensor(t.name, t.type, t.dims, std::vector<uint8_t>(d, d + t.n_bytes));
  }
  w.write(to);
}

using testing::load_error;

// The message is one line and holds every needle.
void expect_refused(const std::string& msg, std::initializer_list<const char*> needles) {
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  for (const char* n : needles) EXPECT_NE(msg.find(n), std::string::npos) << n << " in: " << msg;
}

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
  {
    auto f = gguf::GgufFile::open(base_);
    gguf::GgufWriter w;
    w.copy_metadata(*f, "");
    w.set_u32("qwen3moe.expert_count", 6);
    for (const auto& t : f->tensors()) {
      if (t.name.find("ffn_gate_inp") != std::string::npos) {
        w.add_tensor(t.name, t.type, {t.dims[0], 6}, std::vector<uint8_t>(t.dims[0] * 6 * 4, 0));
        continue;
      }
      const uint8_t* d = f->tensor_data(t);
      w.add_tensor(t.name, t.type, t.dims, std::vector<uint8_t>(d, d + t.n_bytes));
    }
    w.write(path);
  }
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
  {
    auto f = gguf::GgufFile::open(base_);
    gguf::GgufWriter w;
    for (const auto& [k, v] : f->metadata()) {
      if (k == "qwen3moe.expert_count") continue;
      w.copy_metadata(*f, k);  // copies keys with this prefix: exactly k
    }
    for (const auto& t : f->tensors()) {
      const uint8_t* d = f->tensor_data(t);
      w.add_tensor(t.name, t.type, t.dims, std::vector<uint8_t>(d, d + t.n_bytes));
    }
    w.write(path);
  }
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
  {
    auto f = gguf::GgufFile::open(base_);
    gguf::GgufWriter w;
    w.copy_metadata(*f, "");
    for (const auto& t : f->tensors()) {
      const uint8_t* d = f->tensor_data(t);
      auto dims = t.dims;
      if (t.name == "blk.0.ffn_up_exps.weight") dims = {t.dims[0], t.dims[1] * t.dims[2]};
      w.add_tensor(t.name, t.type, dims, std::vector<uint8_t>(d, d + t.n_bytes));
    }
    w.write(path);
  }
  expect_refused(load_error(path),
                 {"blk.0.ffn_up_exps.weight has shape [64, 128]", "expected [64, 32, 4]"});
}

}  // namespace
}  // namespace baton
