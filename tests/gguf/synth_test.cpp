// Synthetic models: llama.cpp names and shapes, metadata, determinism, flag validation.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "gguf/gguf_file.h"
#include "kernels/quantize.h"
#include "support/shared_files.h"
#include "synth/synth_model.h"

namespace baton::synth {
namespace {

using gguf::GgufFile;
using gguf::TensorType;

SynthSpec tiny(const std::string& arch, TensorType type = TensorType::F32) {
  SynthSpec s;
  s.arch = arch;
  s.embd = 64;
  s.layers = 2;
  s.heads = 4;
  s.kv_heads = 2;
  s.ff = 96;
  s.ctx = 128;
  s.type = type;
  s.seed = 42;
  return s;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

std::unique_ptr<GgufFile> build(const SynthSpec& s, const std::string& file) {
  auto path = testing::scratch_dir() / file;
  write_synthetic_model(s, path.string());
  return GgufFile::open(path.string());
}

void expect_dims(const GgufFile& f, const std::string& name, std::vector<uint64_t> dims) {
  const gguf::TensorInfo* t = f.find_tensor(name);
  ASSERT_NE(t, nullptr) << "missing " << name;
  EXPECT_EQ(t->dims, dims) << name;
}

TEST(Synth, LlamaShapesAndMetadata) {
  auto f = build(tiny("llama"), "llama.gguf");
  EXPECT_EQ(f->get_string("general.architecture"), "llama");
  EXPECT_EQ(f->get_int("llama.context_length"), 128);
  EXPECT_EQ(f->get_int("llama.embedding_length"), 64);
  EXPECT_EQ(f->get_int("llama.block_count"), 2);
  EXPECT_EQ(f->get_int("llama.feed_forward_length"), 96);
  EXPECT_EQ(f->get_int("llama.attention.head_count"), 4);
  EXPECT_EQ(f->get_int("llama.attention.head_count_kv"), 2);
  EXPECT_EQ(f->get_int("llama.rope.dimension_count"), 16);
  EXPECT_FLOAT_EQ(f->get_float("llama.attention.layer_norm_rms_epsilon"), 1e-5f);
  EXPECT_FLOAT_EQ(f->get_float("llama.rope.freq_base"), 10000.0f);
  EXPECT_EQ(f->get_int("general.file_type"), 0);
  EXPECT_EQ(f->tensors().size(), 3u + 2u * 9u);
  expect_dims(*f, "token_embd.weight", {64, 259});
  expect_dims(*f, "output.weight", {64, 259});
  expect_dims(*f, "output_norm.weight", {64});
  expect_dims(*f, "blk.1.attn_norm.weight", {64});
  expect_dims(*f, "blk.1.attn_q.weight", {64, 64});
  expect_dims(*f, "blk.1.attn_k.weight", {64, 32});
  expect_dims(*f, "blk.1.attn_v.weight", {64, 32});
  expect_dims(*f, "blk.1.attn_output.weight", {64, 64});
  expect_dims(*f, "blk.1.ffn_norm.weight", {64});
  expect_dims(*f, "blk.1.ffn_gate.weight", {64, 96});
  expect_dims(*f, "blk.1.ffn_up.weight", {64, 96});
  expect_dims(*f, "blk.1.ffn_down.weight", {96, 64});
}

TEST(Synth, Qwen2HasBiasesAndTiedOutput) {
  auto f = build(tiny("qwen2"), "qwen2.gguf");
  EXPECT_EQ(f->find_tensor("output.weight"), nullptr);
  expect_dims(*f, "blk.0.attn_q.bias", {64});
  expect_dims(*f, "blk.0.attn_k.bias", {32});
  expect_dims(*f, "blk.0.attn_v.bias", {32});
  EXPECT_EQ(f->find_tensor("blk.0.attn_q.bias")->type, TensorType::F32);
  EXPECT_FLOAT_EQ(f->get_float("qwen2.attention.layer_norm_rms_epsilon"), 1e-6f);
  EXPECT_FLOAT_EQ(f->get_float("qwen2.rope.freq_base"), 1000000.0f);
  EXPECT_EQ(f->tensors().size(), 2u + 2u * 12u);
}

TEST(Synth, Qwen3HasQkNorms) {
  auto f = build(tiny("qwen3"), "qwen3.gguf");
  expect_dims(*f, "blk.1.attn_q_norm.weight", {16});
  expect_dims(*f, "blk.1.attn_k_norm.weight", {16});
  EXPECT_EQ(f->find_tensor("blk.1.attn_q.bias"), nullptr);
  EXPECT_EQ(f->get_int("qwen3.embedding_length"), 64);
  SynthSpec untied = tiny("qwen3");
  untied.tie_embeddings = false;
  EXPECT_NE(build(untied, "untied.gguf")->find_tensor("output.weight"), nullptr);
}

TEST(Synth, Qwen3MoeHasRouterAndExpertTensors) {
  SynthSpec s = tiny("qwen3moe", TensorType::Q8_0);
  s.experts = 6;
  s.experts_used = 3;
  s.expert_ff = 32;
  auto f = build(s, "qwen3moe.gguf");
  EXPECT_EQ(f->get_string("general.architecture"), "qwen3moe");
  EXPECT_EQ(f->get_int("qwen3moe.expert_count"), 6);
  EXPECT_EQ(f->get_int("qwen3moe.expert_used_count"), 3);
  EXPECT_EQ(f->get_int("qwen3moe.expert_feed_forward_length"), 32);
  EXPECT_EQ(f->get_int("qwen3moe.feed_forward_length"), 96);
  // As the real files: untied output, q/k norms, no dense FFN; the router stays F32.
  EXPECT_NE(f->find_tensor("output.weight"), nullptr);
  expect_dims(*f, "blk.1.attn_q_norm.weight", {16});
  expect_dims(*f, "blk.1.ffn_gate_inp.weight", {64, 6});
  expect_dims(*f, "blk.1.ffn_gate_exps.weight", {64, 32, 6});
  expect_dims(*f, "blk.1.ffn_up_exps.weight", {64, 32, 6});
  expect_dims(*f, "blk.1.ffn_down_exps.weight", {32, 64, 6});
  EXPECT_EQ(f->find_tensor("blk.1.ffn_gate.weight"), nullptr);
  EXPECT_EQ(f->find_tensor("blk.1.ffn_gate_inp.weight")->type, TensorType::F32);
  EXPECT_EQ(f->find_tensor("blk.1.ffn_down_exps.weight")->type, TensorType::Q8_0);
  // token_embd, output, output_norm + per layer 5 attention matrices... : 3 + 2 * 12.
  EXPECT_EQ(f->tensors().size(), 3u + 2u * 12u);
}

// gpt-oss as llama.cpp's converter writes it: biased attention with sinks, post_attention_norm,
// a biased router and biased experts, the window and YaRN keys, key_length and value_length.
TEST(Synth, GptOssTensorsAndKeys) {
  SynthSpec s = tiny("gpt-oss", TensorType::Q8_0);
  s.head_dim = 32;  // q width 4 x 32 = 128 over embd 64
  s.experts = 6;
  s.experts_used = 2;
  s.expert_ff = 32;
  s.swa = 16;
  auto f = build(s, "gpt-oss.gguf");
  EXPECT_EQ(f->get_string("general.architecture"), "gpt-oss");
  EXPECT_EQ(f->get_int("gpt-oss.attention.sliding_window"), 16);
  EXPECT_EQ(f->get_int("gpt-oss.attention.key_length"), 32);
  EXPECT_EQ(f->get_int("gpt-oss.attention.value_length"), 32);
  EXPECT_EQ(f->get_int("gpt-oss.feed_forward_length"), 32);
  EXPECT_EQ(f->get_string("gpt-oss.rope.scaling.type"), "yarn");
  EXPECT_FLOAT_EQ(f->get_float("gpt-oss.rope.scaling.factor"), 32.0f);
  EXPECT_EQ(f->get_int("gpt-oss.rope.scaling.original_context_length"), 4096);
  EXPECT_FLOAT_EQ(f->get_float("gpt-oss.rope.freq_base"), 150000.0f);
  EXPECT_FALSE(f->has("gpt-oss.rope.dimension_count"));
  expect_dims(*f, "blk.1.attn_q.weight", {64, 128});
  expect_dims(*f, "blk.1.attn_q.bias", {128});
  expect_dims(*f, "blk.1.attn_k.bias", {64});
  expect_dims(*f, "blk.1.attn_output.weight", {128, 64});
  expect_dims(*f, "blk.1.attn_output.bias", {64});
  expect_dims(*f, "blk.1.attn_sinks.weight", {4});
  expect_dims(*f, "blk.1.post_attention_norm.weight", {64});
  expect_dims(*f, "blk.1.ffn_gate_inp.bias", {6});
  expect_dims(*f, "blk.1.ffn_gate_exps.bias", {32, 6});
  expect_dims(*f, "blk.1.ffn_up_exps.bias", {32, 6});
  expect_dims(*f, "blk.1.ffn_down_exps.bias", {64, 6});
  expect_dims(*f, "blk.1.ffn_down_exps.weight", {32, 64, 6});
  EXPECT_EQ(f->find_tensor("blk.1.ffn_norm.weight"), nullptr);
  EXPECT_EQ(f->find_tensor("blk.1.attn_q_norm.weight"), nullptr);
  EXPECT_EQ(f->find_tensor("blk.1.attn_sinks.weight")->type, TensorType::F32);
  EXPECT_EQ(f->find_tensor("blk.1.ffn_down_exps.bias")->type, TensorType::F32);
  EXPECT_EQ(f->find_tensor("blk.1.ffn_down_exps.weight")->type, TensorType::Q8_0);
  EXPECT_NE(f->find_tensor("output.weight"), nullptr);
  // token_embd, output, output_norm + per layer 19.
  EXPECT_EQ(f->tensors().size(), 3u + 2u * 19u);
}

// gemma3 as llama.cpp's converter writes Gemma 3 4B/12B/27B: q/k norms and the two post-norms,
// tied output, the window without a pattern key, the global layers' rope (base 1e6, linear 8),
// key_length and value_length, no rope.dimension_count.
TEST(Synth, Gemma3TensorsAndKeys) {
  SynthSpec s = tiny("gemma3", TensorType::Q8_0);
  s.heads = 2;
  s.kv_heads = 1;
  s.head_dim = 64;  // q width 128 over embd 64
  s.swa = 16;
  auto f = build(s, "gemma3.gguf");
  EXPECT_EQ(f->get_string("general.architecture"), "gemma3");
  EXPECT_EQ(f->get_int("gemma3.attention.sliding_window"), 16);
  EXPECT_FALSE(f->has("gemma3.attention.sliding_window_pattern"));
  EXPECT_FALSE(f->has("gemma3.rope.freq_base_swa"));
  EXPECT_EQ(f->get_int("gemma3.attention.key_length"), 64);
  EXPECT_EQ(f->get_int("gemma3.attention.value_length"), 64);
  EXPECT_FALSE(f->has("gemma3.rope.dimension_count"));
  EXPECT_FLOAT_EQ(f->get_float("gemma3.rope.freq_base"), 1e6f);
  EXPECT_EQ(f->get_string("gemma3.rope.scaling.type"), "linear");
  EXPECT_FLOAT_EQ(f->get_float("gemma3.rope.scaling.factor"), 8.0f);
  EXPECT_FLOAT_EQ(f->get_float("gemma3.attention.layer_norm_rms_epsilon"), 1e-6f);
  expect_dims(*f, "blk.1.attn_q.weight", {64, 128});
  expect_dims(*f, "blk.1.attn_output.weight", {128, 64});
  expect_dims(*f, "blk.1.attn_q_norm.weight", {64});
  expect_dims(*f, "blk.1.attn_k_norm.weight", {64});
  expect_dims(*f, "blk.1.post_attention_norm.weight", {64});
  expect_dims(*f, "blk.1.ffn_norm.weight", {64});
  expect_dims(*f, "blk.1.post_ffw_norm.weight", {64});
  expect_dims(*f, "blk.1.ffn_down.weight", {96, 64});
  EXPECT_EQ(f->find_tensor("output.weight"), nullptr);
  EXPECT_EQ(f->find_tensor("blk.1.post_ffw_norm.weight")->type, TensorType::F32);
  // token_embd, output_norm + per layer 13.
  EXPECT_EQ(f->tensors().size(), 2u + 2u * 13u);
}

// mistral3 as llama.cpp's converter writes Devstral Small 2: llama's tensors and keys (its own
// output matrix, rope.dimension_count), the vocabulary size, YaRN with the betas and log
// multiplier, the attention temperature's beta.
TEST(Synth, Mistral3TensorsAndKeys) {
  SynthSpec s = tiny("mistral3", TensorType::Q8_0);
  s.head_dim = 32;  // q width 128 over embd 64
  auto f = build(s, "mistral3.gguf");
  EXPECT_EQ(f->get_string("general.architecture"), "mistral3");
  EXPECT_EQ(f->get_int("mistral3.attention.key_length"), 32);
  EXPECT_EQ(f->get_int("mistral3.attention.value_length"), 32);
  EXPECT_EQ(f->get_int("mistral3.rope.dimension_count"), 32);
  EXPECT_EQ(f->get_int("mistral3.vocab_size"), 259);
  EXPECT_FLOAT_EQ(f->get_float("mistral3.rope.freq_base"), 1e8f);
  EXPECT_FLOAT_EQ(f->get_float("mistral3.attention.layer_norm_rms_epsilon"), 1e-5f);
  EXPECT_EQ(f->get_string("mistral3.rope.scaling.type"), "yarn");
  EXPECT_FLOAT_EQ(f->get_float("mistral3.rope.scaling.factor"), 48.0f);
  EXPECT_EQ(f->get_int("mistral3.rope.scaling.original_context_length"), 8192);
  EXPECT_FLOAT_EQ(f->get_float("mistral3.rope.scaling.yarn_beta_fast"), 32.0f);
  EXPECT_FLOAT_EQ(f->get_float("mistral3.rope.scaling.yarn_beta_slow"), 1.0f);
  EXPECT_FLOAT_EQ(f->get_float("mistral3.rope.scaling.yarn_log_multiplier"), 1.0f);
  EXPECT_FLOAT_EQ(f->get_float("mistral3.attention.temperature_scale"), 0.1f);
  EXPECT_FALSE(f->has("mistral3.attention.sliding_window"));
  expect_dims(*f, "blk.1.attn_q.weight", {64, 128});
  expect_dims(*f, "blk.1.attn_output.weight", {128, 64});
  expect_dims(*f, "blk.1.ffn_gate.weight", {64, 96});
  expect_dims(*f, "output.weight", {64, 259});
  EXPECT_EQ(f->find_tensor("blk.1.attn_q_norm.weight"), nullptr);
  // token_embd, output, output_norm + per layer 9.
  EXPECT_EQ(f->tensors().size(), 3u + 2u * 9u);
}

// Each expert of a 3-D tensor has its own random rows and the fan-in scale of its matrices.
TEST(Synth, Qwen3MoeExpertsDiffer) {
  SynthSpec s = tiny("qwen3moe");
  s.experts = 4;
  s.expert_ff = 32;
  auto f = build(s, "experts.gguf");
  const auto* t = f->find_tensor("blk.0.ffn_down_exps.weight");
  const float* x = reinterpret_cast<const float*>(f->tensor_data(*t));
  const uint64_t per = 32 * 64;
  EXPECT_NE(std::vector<float>(x, x + per), std::vector<float>(x + per, x + 2 * per));
  double sq = 0;
  for (uint64_t k = 0; k < t->n_elements; ++k) sq += double(x[k]) * x[k];
  EXPECT_NEAR(std::sqrt(sq / t->n_elements), 1.0 / std::sqrt(32.0), 0.01);
}

TEST(Synth, ByteVocab) {
  auto f = build(tiny("llama"), "v.gguf");
  const auto& tokens = f->get_strings("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), 259u);
  EXPECT_EQ(tokens[0], "<unk>");
  EXPECT_EQ(tokens[1], "<s>");
  EXPECT_EQ(tokens[2], "</s>");
  EXPECT_EQ(tokens[3], "<0x00>");
  EXPECT_EQ(tokens[258], "<0xFF>");
  const auto& types = f->get_ints("tokenizer.ggml.token_type");
  EXPECT_EQ(types[0], 2);
  EXPECT_EQ(types[1], 3);
  EXPECT_EQ(types[100], 6);
  EXPECT_EQ(f->get_floats("tokenizer.ggml.scores").size(), 259u);
  EXPECT_EQ(f->get_string("tokenizer.ggml.model"), "llama");
  EXPECT_EQ(f->get_int("tokenizer.ggml.bos_token_id"), 1);
  EXPECT_EQ(f->get_int("tokenizer.ggml.eos_token_id"), 2);
  EXPECT_EQ(f->get_int("tokenizer.ggml.unknown_token_id"), 0);
  EXPECT_TRUE(f->get_bool_or("tokenizer.ggml.add_bos_token", false));
  EXPECT_FALSE(f->has("tokenizer.ggml.merges"));
}

TEST(Synth, VocabFromCopiesTokenizer) {
  BATON_REQUIRE_SHARED(vocab, "models/vocab/ggml-vocab-llama-spm.gguf");
  SynthSpec s = tiny("llama", TensorType::Q8_0);
  s.vocab_from = vocab.string();
  auto f = build(s, "spm.gguf");
  auto v = GgufFile::open(vocab.string());
  size_t copied = 0;
  for (const auto& [key, value] : v->metadata()) {
    if (key.rfind("tokenizer.", 0) != 0) continue;
    ASSERT_TRUE(f->has(key)) << key;
    EXPECT_EQ(f->find(key)->to_display(1000), value.to_display(1000)) << key;
    ++copied;
  }
  EXPECT_GT(copied, 3u);
  uint64_t n_vocab = v->get_strings("tokenizer.ggml.tokens").size();
  expect_dims(*f, "token_embd.weight", {64, n_vocab});
  EXPECT_EQ(f->get_string("general.architecture"), "llama");
  EXPECT_EQ(f->get_int("general.file_type"), 7);
}

TEST(Synth, SameSeedSameBytesOtherSeedOtherBytes) {
  auto dir = testing::scratch_dir();
  SynthSpec s = tiny("qwen2", TensorType::Q8_0);
  s.threads = 1;
  write_synthetic_model(s, (dir / "a.gguf").string());
  s.threads = 3;
  write_synthetic_model(s, (dir / "b.gguf").string());
  s.seed = 43;
  write_synthetic_model(s, (dir / "c.gguf").string());
  EXPECT_EQ(slurp(dir / "a.gguf"), slurp(dir / "b.gguf"));
  EXPECT_NE(slurp(dir / "a.gguf"), slurp(dir / "c.gguf"));
  EXPECT_EQ(slurp(dir / "a.gguf").size(), slurp(dir / "c.gguf").size());
}

TEST(Synth, WeightScaleFollowsFanIn) {
  SynthSpec s = tiny("llama");
  s.embd = 256;
  s.heads = 8;
  s.ff = 1024;
  auto f = build(s, "scale.gguf");
  for (const char* name : {"blk.0.attn_q.weight", "blk.0.ffn_down.weight"}) {
    const auto* t = f->find_tensor(name);
    const float* x = reinterpret_cast<const float*>(f->tensor_data(*t));
    double sum = 0, sq = 0;
    for (uint64_t k = 0; k < t->n_elements; ++k) {
      sum += x[k];
      sq += double(x[k]) * x[k];
    }
    double mean = sum / t->n_elements, sd = std::sqrt(sq / t->n_elements - mean * mean);
    double want = 1.0 / std::sqrt(double(t->dims[0]));
    EXPECT_NEAR(sd, want, want * 0.05) << name;
    EXPECT_NEAR(mean, 0.0, want * 0.05) << name;
  }
  const auto* norm = f->find_tensor("blk.0.attn_norm.weight");
  const float* w = reinterpret_cast<const float*>(f->tensor_data(*norm));
  for (uint64_t k = 0; k < norm->n_elements; ++k) EXPECT_NEAR(w[k], 1.0f, 0.05f);
}

TEST(Synth, QuantizedTypesOpenAndDecode) {
  for (TensorType t : {TensorType::F16, TensorType::Q8_0, TensorType::Q4_0, TensorType::Q4_1,
                       TensorType::Q5_0, TensorType::IQ4_NL, TensorType::Q2_K, TensorType::Q3_K,
                       TensorType::Q4_K, TensorType::Q5_K, TensorType::Q6_K, TensorType::IQ4_XS}) {
    SCOPED_TRACE(std::string(gguf::type_name(t)));
    SynthSpec s = tiny("qwen3", t);
    s.embd = 256;
    s.heads = 4;
    s.ff = 512;
    s.layers = 1;
    auto f = build(s, "q.gguf");
    const auto* q = f->find_tensor("blk.0.attn_q.weight");
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(q->type, t);
    EXPECT_EQ(f->find_tensor("blk.0.attn_q_norm.weight")->type, TensorType::F32);
    EXPECT_EQ(f->find_tensor("token_embd.weight")->type, t);
    std::vector<float> row(256);
    kernels::dequantize_row(t, f->tensor_data(*q), row.data(), 256);
    double sq = 0;
    for (float v : row) sq += double(v) * v;
    EXPECT_NEAR(std::sqrt(sq / 256), 1.0 / 16, 0.02);
  }
}

// general.file_type is llama.cpp's llama_ftype for the type or mix (the _S variant for a
// K-quant written alone).
TEST(Synth, FileTypeNamesTheTypeOrMix) {
  const std::pair<TensorType, int> plain[] = {
      {TensorType::F32, 0},    {TensorType::F16, 1},   {TensorType::Q4_0, 2},
      {TensorType::Q4_1, 3},   {TensorType::Q8_0, 7},  {TensorType::Q5_0, 8},
      {TensorType::Q2_K, 10},  {TensorType::Q3_K, 11}, {TensorType::Q4_K, 14},
      {TensorType::Q5_K, 16},  {TensorType::Q6_K, 18}, {TensorType::IQ4_NL, 25},
      {TensorType::IQ4_XS, 30}};
  for (auto [t, ftype] : plain) {
    SynthSpec s = tiny("qwen3", t);
    s.embd = 256;
    s.ff = 256;
    s.layers = 1;
    EXPECT_EQ(build(s, "ft.gguf")->get_int("general.file_type"), ftype) << gguf::type_name(t);
  }
  for (auto [mix, ftype] : {std::pair{Mix::kQ3_K_M, 12},
                            {Mix::kQ4_K_M, 15},
                            {Mix::kQ5_K_M, 17},
                            {Mix::kMXFP4_MOE, 38}}) {
    SynthSpec s = tiny("qwen3", mix_base_type(mix));
    s.mix = mix;
    s.embd = 256;
    s.ff = 256;
    s.layers = 1;
    EXPECT_EQ(build(s, "ft.gguf")->get_int("general.file_type"), ftype) << mix_name(mix);
  }
}

std::string spec_error_of(const SynthSpec& s);

// The type of every matrix of a 16-layer llama model written with `mix`, by layer.
struct MixLayout {
  TensorType output = TensorType::F32, token_embd = TensorType::F32;
  std::vector<TensorType> q, k, v, o, gate, up, down;
};

MixLayout layout_of(Mix mix, const std::string& file) {
  SynthSpec s = tiny("llama", mix_base_type(mix));
  s.mix = mix;
  s.embd = 256;
  s.ff = 512;
  s.layers = 16;
  auto f = build(s, file);
  MixLayout m;
  m.output = f->find_tensor("output.weight")->type;
  m.token_embd = f->find_tensor("token_embd.weight")->type;
  for (int l = 0; l < 16; ++l) {
    const auto type = [&](const char* t) {
      return f->find_tensor("blk." + std::to_string(l) + "." + t)->type;
    };
    m.q.push_back(type("attn_q.weight"));
    m.k.push_back(type("attn_k.weight"));
    m.v.push_back(type("attn_v.weight"));
    m.o.push_back(type("attn_output.weight"));
    m.gate.push_back(type("ffn_gate.weight"));
    m.up.push_back(type("ffn_up.weight"));
    m.down.push_back(type("ffn_down.weight"));
  }
  return m;
}

// Layer l's entry is `more` for the listed layers and `base` for the others.
std::vector<TensorType> by_layer(TensorType base, TensorType more, std::vector<int> layers) {
  std::vector<TensorType> out(16, base);
  for (int l : layers) out[size_t(l)] = more;
  return out;
}

// Q4_K_M and Q5_K_M: the base type except the output matrix and, in the first and last eighth
// of the layers and every third layer between, attn_v and ffn_down, in Q6_K.
TEST(Synth, Q4KMAndQ5KMMixQ6KWhereDownloadsDo) {
  for (Mix mix : {Mix::kQ4_K_M, Mix::kQ5_K_M}) {
    SCOPED_TRACE(std::string(mix_name(mix)));
    const TensorType base = mix_base_type(mix);
    const auto m = layout_of(mix, "km.gguf");
    EXPECT_EQ(m.output, TensorType::Q6_K);
    EXPECT_EQ(m.token_embd, base);
    const auto raised = by_layer(base, TensorType::Q6_K, {0, 1, 4, 7, 10, 13, 14, 15});
    EXPECT_EQ(m.v, raised);
    EXPECT_EQ(m.down, raised);
    for (const auto* plain : {&m.q, &m.k, &m.o, &m.gate, &m.up}) {
      EXPECT_EQ(*plain, std::vector<TensorType>(16, base));
    }
  }
  SynthSpec wrong = tiny("llama", TensorType::Q8_0);
  wrong.mix = Mix::kQ4_K_M;
  EXPECT_NE(spec_error_of(wrong).find("--type q4_k_m"), std::string::npos);
}

// Q3_K_M: Q3_K except attn_v (Q5_K in layers 0 and 1, Q4_K after), attn_output (Q4_K),
// ffn_down (Q5_K in the first sixteenth of the layers, Q4_K after) and the output (Q6_K).
TEST(Synth, Q3KMMixesQ4KQ5KAndQ6KWhereDownloadsDo) {
  const auto m = layout_of(Mix::kQ3_K_M, "q3km.gguf");
  EXPECT_EQ(m.output, TensorType::Q6_K);
  EXPECT_EQ(m.token_embd, TensorType::Q3_K);
  EXPECT_EQ(m.v, by_layer(TensorType::Q4_K, TensorType::Q5_K, {0, 1}));
  EXPECT_EQ(m.down, by_layer(TensorType::Q4_K, TensorType::Q5_K, {0}));
  EXPECT_EQ(m.o, std::vector<TensorType>(16, TensorType::Q4_K));
  for (const auto* plain : {&m.q, &m.k, &m.gate, &m.up}) {
    EXPECT_EQ(*plain, std::vector<TensorType>(16, TensorType::Q3_K));
  }
  SynthSpec wrong = tiny("llama", TensorType::Q4_K);
  wrong.embd = 256;
  wrong.ff = 256;
  wrong.mix = Mix::kQ3_K_M;
  const std::string msg = spec_error_of(wrong);
  EXPECT_NE(msg.find("Q3_K_M mix has base type q3_K"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--type q3_k_m"), std::string::npos) << msg;
}

// The mixes give every tensor the type llama.cpp's llama-quantize gave it in the mixed files
// of ../shared/models/quants (a 4-layer llama of the same shape).
TEST(Synth, MixesMatchLlamaCppFiles) {
  for (Mix mix : {Mix::kQ3_K_M, Mix::kQ4_K_M, Mix::kQ5_K_M}) {
    const std::string name(mix_name(mix));
    BATON_REQUIRE_SHARED(path, "models/quants/synth-" + name + ".gguf");
    const auto theirs = GgufFile::open(path.string());
    SynthSpec s = tiny("llama", mix_base_type(mix));
    s.mix = mix;
    s.embd = 256;
    s.layers = 4;
    s.heads = 4;
    s.kv_heads = 2;
    s.ff = 768;
    const auto ours = build(s, "mix.gguf");
    int matrices = 0;
    for (const auto& t : theirs->tensors()) {
      const gguf::TensorInfo* mine = ours->find_tensor(t.name);
      ASSERT_NE(mine, nullptr) << name << " " << t.name;
      EXPECT_EQ(mine->type, t.type) << name << " " << t.name;
      matrices += t.dims.size() == 2;
    }
    EXPECT_EQ(matrices, 2 + 4 * 7) << name;
  }
}

// MXFP4_MOE: the 3-D expert tensors in MXFP4, the router F32, every other matrix Q8_0 (the
// output and token_embd too); a dense model gets Q8_0 throughout. The experts read back as the
// F32 model's weights (same seed) to MXFP4's precision.
TEST(Synth, Mxfp4MoeWritesTheExpertsInMxfp4) {
  SynthSpec s = tiny("qwen3moe", TensorType::Q8_0);
  s.mix = Mix::kMXFP4_MOE;
  s.embd = 128;
  s.expert_ff = 96;
  auto f = build(s, "mx.gguf");
  int experts = 0;
  for (const auto& t : f->tensors()) {
    TensorType want = TensorType::F32;
    if (t.name.find("_exps.") != std::string::npos) {
      want = TensorType::MXFP4;
      ++experts;
    } else if (t.dims.size() == 2 && t.name.find("ffn_gate_inp") == std::string::npos) {
      want = TensorType::Q8_0;
    }
    EXPECT_EQ(t.type, want) << t.name;
  }
  EXPECT_EQ(experts, 3 * 2);
  EXPECT_EQ(f->find_tensor("output.weight")->type, TensorType::Q8_0);
  EXPECT_EQ(f->get_int("general.file_type"), 38);

  SynthSpec plain = s;
  plain.mix = Mix::kNone;
  plain.type = TensorType::F32;
  auto ref = build(plain, "f32.gguf");
  for (const char* name : {"blk.1.ffn_gate_exps.weight", "blk.1.ffn_down_exps.weight"}) {
    const auto* q = f->find_tensor(name);
    const auto* x = ref->find_tensor(name);
    ASSERT_EQ(q->dims, x->dims) << name;
    const auto n = int64_t(q->n_elements);
    std::vector<float> y(static_cast<size_t>(n));
    kernels::dequantize_row(TensorType::MXFP4, f->tensor_data(*q), y.data(), n);
    const auto* xv = reinterpret_cast<const float*>(ref->tensor_data(*x));
    double num = 0, den = 0;
    for (int64_t k = 0; k < n; ++k) {
      num += (double(xv[k]) - y[size_t(k)]) * (double(xv[k]) - y[size_t(k)]);
      den += double(xv[k]) * xv[k];
    }
    EXPECT_LT(std::sqrt(num / den), 0.12) << name;  // uniform weights: about 0.10
  }

  SynthSpec dense = tiny("llama", TensorType::Q8_0);
  dense.mix = Mix::kMXFP4_MOE;
  const auto dense_file = build(dense, "dense.gguf");
  for (const auto& t : dense_file->tensors()) {
    EXPECT_EQ(t.type, t.dims.size() == 2 ? TensorType::Q8_0 : TensorType::F32) << t.name;
  }
  SynthSpec wrong = tiny("qwen3moe", TensorType::MXFP4);
  wrong.mix = Mix::kMXFP4_MOE;
  EXPECT_NE(spec_error_of(wrong).find("MXFP4_MOE mix has base type q8_0"), std::string::npos)
      << spec_error_of(wrong);
  wrong.mix = Mix::kNone;  // the type alone: only the mix writes it
  EXPECT_NE(spec_error_of(wrong).find("only as the MXFP4_MOE mix"), std::string::npos)
      << spec_error_of(wrong);
  wrong = tiny("qwen3moe", TensorType::Q8_0);
  wrong.mix = Mix::kMXFP4_MOE;
  wrong.expert_ff = 48;
  EXPECT_NE(spec_error_of(wrong).find("--expert-ff 48"), std::string::npos) << spec_error_of(wrong);
}

// The types llama.cpp's llama-quantize gave the gpt-oss reference model under MXFP4_MOE, for
// every tensor a qwen3moe model also has (embeddings, output, attention, router, experts).
TEST(Synth, Mxfp4MoeMatchesLlamaCppFile) {
  BATON_REQUIRE_SHARED(path, "models/arch/synth-gpt-oss-MXFP4_MOE.gguf");
  const auto theirs = GgufFile::open(path.string());
  SynthSpec s = tiny("qwen3moe", TensorType::Q8_0);
  s.mix = Mix::kMXFP4_MOE;
  s.embd = 256;
  s.layers = 4;
  s.heads = 4;
  s.kv_heads = 2;
  s.experts = 8;
  s.expert_ff = 32;
  const auto ours = build(s, "mx.gguf");
  int shared = 0;
  for (const auto& t : theirs->tensors()) {
    const gguf::TensorInfo* mine = ours->find_tensor(t.name);
    if (mine == nullptr) continue;  // gpt-oss's own tensors (biases, sinks, post-attention norm)
    EXPECT_EQ(mine->type, t.type) << t.name;
    ++shared;
  }
  EXPECT_EQ(shared, 3 + 4 * 9);
}

TEST(Synth, ParseSynthTypeTakesTypesAndMixes) {
  SynthSpec s;
  parse_synth_type("IQ4_XS", s);
  EXPECT_EQ(s.type, TensorType::IQ4_XS);
  EXPECT_EQ(s.mix, Mix::kNone);
  parse_synth_type("q5_k_m", s);
  EXPECT_EQ(s.type, TensorType::Q5_K);
  EXPECT_EQ(s.mix, Mix::kQ5_K_M);
  parse_synth_type("Q3_K_M", s);
  EXPECT_EQ(s.type, TensorType::Q3_K);
  EXPECT_EQ(s.mix, Mix::kQ3_K_M);
  parse_synth_type("q2_k", s);
  EXPECT_EQ(s.type, TensorType::Q2_K);
  EXPECT_EQ(s.mix, Mix::kNone);
  for (const char* mx : {"mxfp4", "MXFP4", "mxfp4_moe", "MXFP4_MOE"}) {
    s = SynthSpec{};
    parse_synth_type(mx, s);
    EXPECT_EQ(s.type, TensorType::Q8_0) << mx;
    EXPECT_EQ(s.mix, Mix::kMXFP4_MOE) << mx;
  }
  for (const char* bad : {"q5_1", "q8_k", "q4_k_s", "mxfp4_m", "bogus", ""}) {
    try {
      parse_synth_type(bad, s);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const SynthError& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      EXPECT_EQ(msg, "--type " + std::string(bad) + ": expected " + synth_type_list());
    }
  }
  EXPECT_EQ(synth_type_list(),
            "f32, f16, q8_0, q4_0, q4_1, q5_0, iq4_nl, q2_k, q3_k, q4_k, q5_k, q6_k, iq4_xs, "
            "q3_k_m, q4_k_m, q5_k_m or mxfp4");
}

std::string spec_error(const SynthSpec& s) {
  try {
    validate(s);
  } catch (const SynthError& e) {
    return e.what();
  }
  return "";
}

TEST(Synth, FlagErrorsNameTheFlagAndTheFix) {
  SynthSpec s = tiny("llama", TensorType::Q4_K);
  std::string msg = spec_error(s);
  EXPECT_NE(msg.find("--embd 64"), std::string::npos) << msg;
  EXPECT_NE(msg.find("multiple of 256"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--embd 256"), std::string::npos) << msg;
  s = tiny("llama", TensorType::Q8_0);
  s.ff = 100;
  EXPECT_NE(spec_error(s).find("--ff 100"), std::string::npos) << spec_error(s);
  s = tiny("mistral");
  EXPECT_NE(spec_error(s).find("--arch mistral"), std::string::npos);
  EXPECT_NE(spec_error(s).find("qwen3moe"), std::string::npos);
  s = tiny("qwen3moe");
  s.experts_used = 9;
  EXPECT_NE(spec_error(s).find("--experts-used 9: expected 1..8"), std::string::npos)
      << spec_error(s);
  s.experts_used = 0;
  EXPECT_NE(spec_error(s).find("--experts-used 0"), std::string::npos) << spec_error(s);
  s = tiny("qwen3moe");
  s.experts = 0;
  EXPECT_NE(spec_error(s).find("--experts 0"), std::string::npos) << spec_error(s);
  s = tiny("gpt-oss");
  s.swa = 0;
  EXPECT_NE(spec_error(s).find("--swa 0: expected a value in 1.."), std::string::npos)
      << spec_error(s);
  s = tiny("gemma3");
  s.swa = 0;
  EXPECT_NE(spec_error(s).find("--swa 0: expected a value in 1.."), std::string::npos)
      << spec_error(s);
  s = tiny("gemma2");
  EXPECT_NE(spec_error(s).find("--arch gemma2: expected llama, qwen2, qwen3, qwen3moe, gpt-oss, "
                               "qwen35, qwen35moe, qwen3next, gemma3 or mistral3"),
            std::string::npos)
      << spec_error(s);
  s = tiny("gpt-oss");
  s.head_dim = 33;
  EXPECT_NE(spec_error(s).find("--head-dim 33: rotary embeddings need an even head dimension"),
            std::string::npos)
      << spec_error(s);
  s = tiny("llama", TensorType::Q4_K);
  s.embd = 256;
  s.ff = 256;
  s.head_dim = 32;  // q width 4 x 32 = 128: not whole Q4_K blocks
  EXPECT_NE(spec_error(s).find("--heads x --head-dim 128"), std::string::npos) << spec_error(s);
  s = tiny("qwen3moe", TensorType::Q4_K);
  s.embd = 256;
  s.expert_ff = 32;
  EXPECT_NE(spec_error(s).find("--expert-ff 32: --type q4_K needs rows that are a multiple of "
                               "256; use --expert-ff 256"),
            std::string::npos)
      << spec_error(s);
  s.expert_ff = 256;
  s.ff = 100;  // written as a key only: no block constraint
  EXPECT_EQ(spec_error(s), "");
  s = tiny("llama");
  s.heads = 5;
  EXPECT_NE(spec_error(s).find("--heads 5"), std::string::npos);
  s = tiny("llama");
  s.kv_heads = 3;
  EXPECT_NE(spec_error(s).find("--kv-heads 3"), std::string::npos);
  s = tiny("llama");
  s.layers = 0;
  EXPECT_NE(spec_error(s).find("--layers 0"), std::string::npos);
  s = tiny("llama", TensorType::Q5_1);
  EXPECT_NE(spec_error(s).find("--type q5_1: expected f32"), std::string::npos) << spec_error(s);
  EXPECT_EQ(spec_error(tiny("qwen3")), "");
  EXPECT_THROW(write_synthetic_model(tiny("llama", TensorType::Q4_K), "unused.gguf"), SynthError);
}

TEST(Synth, HeadDimWiderThanEmbdOverHeads) {
  // Qwen3-30B-A3B's shape: the q width (heads x 128) is twice embd.
  SynthSpec s = tiny("qwen3");
  s.head_dim = 32;
  auto f = build(s, "qwen3-hd32.gguf");
  expect_dims(*f, "blk.0.attn_q.weight", {64, 128});
  expect_dims(*f, "blk.0.attn_k.weight", {64, 64});
  expect_dims(*f, "blk.0.attn_output.weight", {128, 64});
  expect_dims(*f, "blk.0.attn_q_norm.weight", {32});
  EXPECT_EQ(f->get_int("qwen3.attention.key_length"), 32);
  EXPECT_EQ(f->get_int("qwen3.attention.value_length"), 32);
  EXPECT_EQ(f->get_int("qwen3.rope.dimension_count"), 32);
  // Without it, no key_length is written (the reader derives embd / heads).
  EXPECT_EQ(build(tiny("qwen3"), "qwen3-hd16.gguf")->find("qwen3.attention.key_length"), nullptr);
  s.head_dim = 33;
  EXPECT_NE(spec_error(s).find("--head-dim 33"), std::string::npos) << spec_error(s);
  s = tiny("llama");
  s.heads = 5;
  s.kv_heads = 1;
  s.head_dim = 16;  // embd 64 is no multiple of 5 heads, but the width is given
  EXPECT_EQ(spec_error(s), "");
}

std::string spec_error_of(const SynthSpec& s) {
  return spec_error(s);
}

}  // namespace
}  // namespace baton::synth
