// Batch invariance and architecture coverage on small synthetic models (random weights).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <mutex>

#include "engine/generate.h"
#include "engine/llama_engine.h"
#include "gguf/gguf_file.h"
#include "invariance.h"
#include "kernels/simd.h"
#include "kernels/tiles16.h"
#include "support/shared_files.h"
#include "synth/synth_model.h"

namespace baton {
namespace {

// Writes each synthetic model once per test process. Every one holds the same random weights
// (the seed is fixed), quantized to `type` or to the types of `mix`.
std::string synth_model(const std::string& arch, gguf::TensorType type,
                        synth::Mix mix = synth::Mix::kNone) {
  static std::mutex mu;
  static std::map<std::string, std::string> made;
  std::lock_guard lock(mu);
  const std::string key =
      arch + "-" +
      std::string(mix == synth::Mix::kNone ? gguf::type_name(type) : synth::mix_name(mix));
  if (auto it = made.find(key); it != made.end()) return it->second;
  auto dir = std::filesystem::temp_directory_path() / "baton-tests" / "model-synth";
  std::filesystem::create_directories(dir);
  synth::SynthSpec spec;
  spec.arch = arch;
  spec.embd = 256;
  spec.layers = 2;
  spec.heads = 8;
  spec.kv_heads = 2;
  spec.ff = 512;
  spec.ctx = 1024;
  spec.type = type;
  spec.mix = mix;
  spec.seed = 7;
  spec.threads = 2;
  const auto path = (dir / (key + ".gguf")).string();
  synth::write_synthetic_model(spec, path);
  return made[key] = path;
}

void expect_invariant_with_kv(const std::string& path, int threads, const std::string& kv = "f16") {
  engine::EngineOptions opts;
  opts.threads = threads;
  opts.kv_type = kv;
  auto eng = engine::load_llama_engine(path, opts);
  eng->allocate_kv(2048);
  const auto prompt = testing::some_prompt(80, eng->info().n_vocab);
  testing::BlockAllocator alloc;
  const auto ref = testing::run_target(*eng, prompt, 0, 0, alloc, 1);
  ASSERT_EQ(ref.size(), static_cast<size_t>(eng->info().n_vocab));
  for (float v : ref) ASSERT_TRUE(std::isfinite(v));
  uint32_t seed = 10;
  for (int chunk : {1, 7, 64, 0}) {
    for (int others : {0, 1, 2, 5, 8}) {
      if (chunk == 1 && others > 2 && others != 8) continue;  // keeps the suite fast
      testing::BlockAllocator fresh(alloc.used());
      auto got = testing::run_target(*eng, prompt, chunk, others, fresh, seed++);
      EXPECT_TRUE(testing::bit_identical(ref, got))
          << path << " chunk " << chunk << " others " << others;
    }
  }
}

TEST(SynthModel, LlamaQ8_0BatchInvariant) {
  expect_invariant_with_kv(synth_model("llama", gguf::TensorType::Q8_0), 2);
}

TEST(SynthModel, LlamaQ4_KBatchInvariant) {
  expect_invariant_with_kv(synth_model("llama", gguf::TensorType::Q4_K), 2);
}

TEST(SynthModel, Qwen2BatchInvariant) {
  expect_invariant_with_kv(synth_model("qwen2", gguf::TensorType::Q8_0), 2, "f32");
}

TEST(SynthModel, Qwen3BatchInvariant) {
  expect_invariant_with_kv(synth_model("qwen3", gguf::TensorType::Q4_K), 2);
}

TEST(SynthModel, ThreadCountDoesNotChangeLogits) {
  const auto path = synth_model("llama", gguf::TensorType::Q8_0);
  std::vector<std::vector<float>> logits;
  for (int threads : {1, 2, 3}) {
    engine::EngineOptions opts;
    opts.threads = threads;
    auto eng = engine::load_llama_engine(path, opts);
    engine::GenerateOptions g;
    g.max_tokens = 0;
    logits.push_back(
        engine::generate(*eng, testing::some_prompt(20, eng->info().n_vocab), g).first_logits);
  }
  EXPECT_TRUE(testing::bit_identical(logits[0], logits[1]));
  EXPECT_TRUE(testing::bit_identical(logits[0], logits[2]));
}

// Weights interleaved at load (the AVX-512 default, with Q/K/V and gate/up stacked) give the
// file layout's logits within float rounding, for chunked prefills batched with other sequences:
// the 16-row tiles of these types sum each block's products in one lane instead of four (the
// 4-row tiles of the other types, bit-identical to the file layout, are checked in
// tests/kernels/interleave_test.cpp).
TEST(SynthModel, InterleavedWeightsKeepTheLogits) {
  for (auto type : {gguf::TensorType::Q4_0, gguf::TensorType::Q8_0, gguf::TensorType::Q4_K}) {
    const auto path = synth_model("llama", type);
    std::vector<std::vector<float>> logits;
    for (bool interleave : {false, true}) {
      engine::EngineOptions opts;
      opts.threads = 2;
      opts.interleave_weights = interleave;
      auto eng = engine::load_llama_engine(path, opts);
      const bool interleaved =
          interleave && kernels::active_simd_level() == kernels::SimdLevel::Avx512;
      EXPECT_EQ(eng->model().interleaved_bytes() > 0, interleaved);
      // Q/K/V and gate/up are stacked into one matmul each when interleaved.
      EXPECT_EQ(eng->model().weights().layers[0].wqkv.data != nullptr, interleaved);
      EXPECT_EQ(eng->model().weights().layers[1].w_gate_up.data != nullptr, interleaved);
      eng->allocate_kv(64);
      testing::BlockAllocator alloc;
      logits.push_back(
          testing::run_target(*eng, testing::some_prompt(40, eng->info().n_vocab), 8, 2, alloc, 5));
    }
    ASSERT_TRUE(kernels::has_tiles16(type));
    ASSERT_EQ(logits[0].size(), logits[1].size());
    float scale = 1, worst = 0;
    for (size_t i = 0; i < logits[0].size(); ++i) {
      scale = std::max(scale, std::fabs(logits[0][i]));
      worst = std::max(worst, std::fabs(logits[0][i] - logits[1][i]));
    }
    // A random-weight model magnifies rounding: the AVX2 and AVX-512 kernels differ by as much
    // here. A wrong tile would be off by the logits' own size; accuracy against llama.cpp is
    // QuantReference's to check.
    EXPECT_LE(worst, 2e-2f * scale) << gguf::type_name(type);
  }
}

// Attention's online softmax walks hundreds of blocks here: a 700-token prompt must give the same
// logits whole, in prefill-sized or odd chunks batched with other sequences, on 1 or 2 threads.
TEST(SynthModel, LongContextBatchInvariant) {
  const auto path = synth_model("llama", gguf::TensorType::Q8_0);
  std::vector<float> ref;
  uint32_t seed = 40;
  for (int threads : {2, 1}) {
    engine::EngineOptions opts;
    opts.threads = threads;
    auto eng = engine::load_llama_engine(path, opts);
    eng->allocate_kv(1024);
    const auto prompt = testing::some_prompt(700, eng->info().n_vocab);
    testing::BlockAllocator alloc;
    if (ref.empty()) {
      ref = testing::run_target(*eng, prompt, 0, 0, alloc, 1);
      for (float v : ref) ASSERT_TRUE(std::isfinite(v));
    }
    for (auto [chunk, others] : {std::pair{128, 3}, {37, 1}, {300, 0}}) {
      testing::BlockAllocator fresh(alloc.used());
      auto got = testing::run_target(*eng, prompt, chunk, others, fresh, seed++);
      EXPECT_TRUE(testing::bit_identical(ref, got))
          << "threads " << threads << " chunk " << chunk << " others " << others;
    }
  }
}

TEST(SynthModel, CopyBlockCarriesThePrefix) {
  const auto path = synth_model("llama", gguf::TensorType::Q8_0);
  engine::EngineOptions opts;
  opts.threads = 2;
  auto eng = engine::load_llama_engine(path, opts);
  eng->allocate_kv(16);
  const int32_t bs = eng->info().block_size;
  const auto prompt = testing::some_prompt(bs + 5, eng->info().n_vocab);
  // A: the whole prompt in blocks {0, 1}.
  engine::StepBatch b;
  b.seqs.push_back({1, 0, prompt, {0, 1}, true, {}});
  engine::StepOutput ref;
  eng->forward(b, ref);
  // B: prefix of bs + 3 tokens in blocks {2, 3}; the partial tail block 3 is copied to 4 and the
  // rest runs in {2, 4}.
  std::vector<int32_t> head(prompt.begin(), prompt.begin() + bs + 3);
  std::vector<int32_t> tail(prompt.begin() + bs + 3, prompt.end());
  engine::StepOutput tmp, got;
  b.seqs = {{2, 0, head, {2, 3}, false, {}}};
  eng->forward(b, tmp);
  eng->copy_block(3, 4, 3);
  b.seqs = {{2, bs + 3, tail, {2, 4}, true, {}}};
  eng->forward(b, got);
  ASSERT_EQ(got.logits.size(), 1u);
  EXPECT_TRUE(testing::bit_identical(ref.logits[0], got.logits[0]));
  EXPECT_EQ(got.request_ids, std::vector<uint64_t>{2});
}

TEST(SynthModel, BadBatchesThrowClearErrors) {
  const auto path = synth_model("llama", gguf::TensorType::Q8_0);
  engine::EngineOptions opts;
  opts.threads = 1;
  auto eng = engine::load_llama_engine(path, opts);
  eng->allocate_kv(2);
  engine::StepOutput out;
  auto expect_error = [&](engine::SeqChunk c, const std::string& needle) {
    engine::StepBatch b;
    b.seqs.push_back(c);
    try {
      eng->forward(b, out);
      ADD_FAILURE() << "no error for " << needle;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error({1, 0, {1, 2}, {}, true, {}}, "block_table");
  expect_error({1, 0, {1, 2}, {5}, true, {}}, "block id 5");
  expect_error({1, 0, {-1}, {0}, true, {}}, "token id -1");
  expect_error({1, 0, {eng->info().n_vocab}, {0}, true, {}}, "out of range");
  expect_error({1, 40, {1}, {0, 1}, true, {}}, "block_table");
  EXPECT_THROW(eng->copy_block(0, 9, 1), std::runtime_error);
}

// Every type and mix `baton gguf synth --type` writes with the quantizers added for it loads
// and runs. The files hold the F32 model's weights quantized, so their logits follow the F32
// model's, closer the more bits the type has (measured cosines in the comments; a weight
// written wrongly gives an unrelated model, cosine near 0).
TEST(SynthModel, EveryWrittenTypeAndMixRuns) {
  using gguf::TensorType;
  using synth::Mix;
  struct Case {
    TensorType type;
    Mix mix;
    double min_cosine;
  };
  const Case cases[] = {
      // Cosines measured: 0.970 0.994 0.977 0.694 0.864 0.990 0.979, mixes 0.907 0.974 0.991.
      {TensorType::Q4_1, Mix::kNone, 0.94},   {TensorType::Q5_0, Mix::kNone, 0.98},
      {TensorType::IQ4_NL, Mix::kNone, 0.95}, {TensorType::Q2_K, Mix::kNone, 0.6},
      {TensorType::Q3_K, Mix::kNone, 0.8},    {TensorType::Q5_K, Mix::kNone, 0.98},
      {TensorType::IQ4_XS, Mix::kNone, 0.95}, {TensorType::Q3_K, Mix::kQ3_K_M, 0.85},
      {TensorType::Q4_K, Mix::kQ4_K_M, 0.94}, {TensorType::Q5_K, Mix::kQ5_K_M, 0.98},
  };
  const auto ref = testing::first_logits(synth_model("llama", TensorType::F32), 20);
  for (const auto& c : cases) {
    const auto path = synth_model("llama", c.type, c.mix);
    const std::string what = path.substr(path.rfind('/') + 1);
    auto f = gguf::GgufFile::open(path);
    EXPECT_EQ(f->find_tensor("blk.0.attn_q.weight")->type, c.type) << what;
    EXPECT_EQ(f->find_tensor("blk.1.ffn_up.weight")->type, c.type) << what;
    // With 2 layers: Q3_K_M raises attn_v of both layers to Q5_K and ffn_down to Q4_K; Q4_K_M and
    // Q5_K_M raise attn_v and ffn_down of layer 1 (the last eighth) to Q6_K.
    const auto v0 = f->find_tensor("blk.0.attn_v.weight")->type;
    const auto down1 = f->find_tensor("blk.1.ffn_down.weight")->type;
    switch (c.mix) {
      case Mix::kNone:
        EXPECT_EQ(f->find_tensor("output.weight")->type, c.type) << what;
        EXPECT_EQ(v0, c.type) << what;
        break;
      case Mix::kQ3_K_M:
        EXPECT_EQ(f->find_tensor("output.weight")->type, TensorType::Q6_K) << what;
        EXPECT_EQ(v0, TensorType::Q5_K) << what;
        EXPECT_EQ(down1, TensorType::Q4_K) << what;
        break;
      default:
        EXPECT_EQ(f->find_tensor("output.weight")->type, TensorType::Q6_K) << what;
        EXPECT_EQ(v0, c.type) << what;
        EXPECT_EQ(down1, TensorType::Q6_K) << what;
        break;
    }
    const auto logits = testing::first_logits(path, 20);
    ASSERT_EQ(logits.size(), ref.size()) << what;
    for (float v : logits) ASSERT_TRUE(std::isfinite(v)) << what;
    const double cos = testing::cosine(ref, logits);
    EXPECT_GE(cos, c.min_cosine) << what;
  }
}

TEST(SynthModel, FingerprintDependsOnWeightsAndKvLayout) {
  engine::EngineOptions opts;
  opts.threads = 1;
  const auto a = engine::load_llama_engine(synth_model("llama", gguf::TensorType::Q8_0), opts);
  const auto b = engine::load_llama_engine(synth_model("llama", gguf::TensorType::Q4_K), opts);
  opts.kv_type = "f32";
  const auto c = engine::load_llama_engine(synth_model("llama", gguf::TensorType::Q8_0), opts);
  EXPECT_NE(a->info().fingerprint, b->info().fingerprint);
  EXPECT_NE(a->info().fingerprint, c->info().fingerprint);
  EXPECT_GT(a->info().kv_bytes_per_block, 0u);
  EXPECT_EQ(c->info().kv_bytes_per_block, 2 * a->info().kv_bytes_per_block);
}

}  // namespace
}  // namespace baton
