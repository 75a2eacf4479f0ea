#include "synth/synth_model.h"

#include <fmt/format.h>

#include <cmath>
#include <thread>

#include "gguf/gguf_file.h"
#include "gguf/gguf_writer.h"
#include "synth/byte_vocab.h"
#include "synth/random_fill.h"
#include "util/log.h"

namespace baton::synth {
namespace {

using gguf::TensorType;

// llama.cpp's llama_ftype (general.file_type) for a model whose matrices are all of type t,
// or for a mix.
uint32_t file_type(TensorType t, Mix mix) {
  switch (mix) {
    case Mix::kQ3_K_M:
      return 12;
    case Mix::kQ4_K_M:
      return 15;
    case Mix::kQ5_K_M:
      return 17;
    case Mix::kMXFP4_MOE:
      return 38;
    case Mix::kNone:
      break;
  }
  switch (t) {
    case TensorType::F16:
      return 1;
    case TensorType::Q4_0:
      return 2;
    case TensorType::Q4_1:
      return 3;
    case TensorType::Q8_0:
      return 7;
    case TensorType::Q5_0:
      return 8;
    case TensorType::Q2_K:
      return 10;
    case TensorType::Q3_K:
      return 11;  // Q3_K_S: every matrix q3_K
    case TensorType::Q4_K:
      return 14;  // Q4_K_S
    case TensorType::Q5_K:
      return 16;  // Q5_K_S
    case TensorType::Q6_K:
      return 18;
    case TensorType::IQ4_NL:
      return 25;
    case TensorType::IQ4_XS:
      return 30;
    default:
      return 0;  // F32
  }
}

// The matrices whose type a mix may raise above its base type.
enum class Role { kOther, kOutput, kAttnV, kAttnOutput, kFfnDown };

// Layers where Q4_K_M and Q5_K_M give attn_v and ffn_down Q6_K: the first and last eighth of
// the layers and every third one between.
bool more_bits_layer(int64_t layer, int64_t n_layers) {
  return layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2;
}

// The type of a matrix under the mixes, as llama.cpp's quantizer assigns them for a dense
// llama-style model (no experts, not 70B-sized, not Falcon):
//   all K-quant mixes: output.weight Q6_K; token_embd.weight keeps the base type (even when tied
//     to the output, where llama.cpp would give it the output's Q6_K: synth keeps the simpler
//     rule).
//   MXFP4_MOE (base Q8_0): every 2-D matrix Q8_0, the output too (the experts: Planner).
//   Q4_K_M (base Q4_K), Q5_K_M (base Q5_K): attn_v and ffn_down Q6_K in more_bits_layer.
//   Q3_K_M (base Q3_K): attn_v Q5_K in layers 0 and 1 and Q4_K elsewhere; attn_output Q4_K;
//     ffn_down Q5_K in the first sixteenth of the layers and Q4_K elsewhere.
TensorType mix_type(const SynthSpec& s, Role role, int64_t layer) {
  if (s.mix == Mix::kNone || s.mix == Mix::kMXFP4_MOE || role == Role::kOther) return s.type;
  if (role == Role::kOutput) return TensorType::Q6_K;
  if (s.mix == Mix::kQ3_K_M) {
    switch (role) {
      case Role::kAttnV:
        return layer < 2 ? TensorType::Q5_K : TensorType::Q4_K;
      case Role::kFfnDown:
        return layer < s.layers / 16 ? TensorType::Q5_K : TensorType::Q4_K;
      default:  // kAttnOutput
        return TensorType::Q4_K;
    }
  }
  const bool raised = role != Role::kAttnOutput && more_bits_layer(layer, s.layers);
  return raised ? TensorType::Q6_K : s.type;
}

struct Planner {
  const SynthSpec& s;
  std::vector<TensorPlan> out;

  void matrix(const std::string& name, uint64_t in, uint64_t outs, Role role = Role::kOther,
              int64_t layer = 0) {
    const TensorType t = mix_type(s, role, layer);
    out.push_back({name, t, {in, outs}, 0.0f, 1.0f / std::sqrt(static_cast<float>(in))});
  }
  // A 3-D tensor of n_expert matrices [in, outs]; each expert has the fan-in scale. MXFP4_MOE
  // writes these (and only these) in MXFP4, as llama.cpp's quantizer does.
  void experts(const std::string& name, uint64_t in, uint64_t outs, uint64_t n_expert,
               Role role = Role::kOther, int64_t layer = 0) {
    const TensorType t = s.mix == Mix::kMXFP4_MOE ? TensorType::MXFP4 : mix_type(s, role, layer);
    out.push_back({name, t, {in, outs, n_expert}, 0.0f, 1.0f / std::sqrt(static_cast<float>(in))});
  }
  // Kept F32 whatever the type, as llama.cpp's quantizer keeps a MoE router.
  void router(const std::string& name, uint64_t in, uint64_t n_expert) {
    out.push_back(
        {name, TensorType::F32, {in, n_expert}, 0.0f, 1.0f / std::sqrt(static_cast<float>(in))});
  }
  void norm(const std::string& name, uint64_t n) {
    out.push_back({name, TensorType::F32, {n}, 1.0f, 0.02f});
  }
  void bias(const std::string& name, uint64_t n) {
    out.push_back({name, TensorType::F32, {n}, 0.0f, 0.02f});
  }
  // A bias per expert ([n, n_expert]) and a per-head logit vector: F32 whatever the type, as
  // llama.cpp's quantizer keeps them.
  void expert_bias(const std::string& name, uint64_t n, uint64_t n_expert) {
    out.push_back({name, TensorType::F32, {n, n_expert}, 0.0f, 0.02f});
  }
  void logits(const std::string& name, uint64_t n) {
    out.push_back({name, TensorType::F32, {n}, 0.0f, 1.0f});
  }
};

// The hybrids: every full_attention_interval-th layer is gated attention (q rows [q, gate] per
// head, q/k norms), the others gated DeltaNet (qwen3next's beta and alpha in one matrix, as its
// converter writes them); every FFN routed experts plus a shared expert, or qwen35's dense FFN.
// Names and shapes as llama.cpp's converter writes them.
std::vector<TensorPlan> plan_hybrid(const SynthSpec& s, uint64_t vocab, bool tied) {
  Planner p{s, {}};
  const uint64_t embd = s.embd, hd = head_dim_of(s);
  const uint64_t q = s.heads * hd, kv = s.kv_heads * hd;
  const uint64_t S = s.ssm_head_dim, hv = s.ssm_v_heads, V = hv * S;
  const uint64_t conv = 2 * s.ssm_k_heads * S + V, K = s.ssm_conv;
  const uint64_t ne = s.experts, eff = s.expert_ff, sff = s.shared_ff > 0 ? s.shared_ff : eff;
  p.matrix("token_embd.weight", embd, vocab);
  p.norm("output_norm.weight", embd);
  if (!tied) p.matrix("output.weight", embd, vocab, Role::kOutput);
  for (int64_t l = 0; l < s.layers; ++l) {
    auto n = [l](const char* suffix) { return fmt::format("blk.{}.{}", l, suffix); };
    p.norm(n("attn_norm.weight"), embd);
    p.norm(n("post_attention_norm.weight"), embd);
    if ((l + 1) % s.full_attention_interval != 0) {
      p.matrix(n("attn_qkv.weight"), embd, conv);
      p.matrix(n("attn_gate.weight"), embd, V);
      // Taps of a depthwise convolution (rows of d_conv) stay F32, as llama-quantize keeps them.
      p.out.push_back({n("ssm_conv1d.weight"),
                       TensorType::F32,
                       {K, conv},
                       0.0f,
                       1.0f / std::sqrt(static_cast<float>(K))});
      p.out.push_back({n("ssm_dt.bias"), TensorType::F32, {hv}, 0.0f, 1.0f});
      // -exp(A_log): negative, so every step decays the state.
      p.out.push_back({n("ssm_a"), TensorType::F32, {hv}, -1.0f, 0.4f});
      if (s.arch == "qwen3next") {
        p.matrix(n("ssm_ba.weight"), embd, 2 * hv);
      } else {
        p.matrix(n("ssm_beta.weight"), embd, hv);
        p.matrix(n("ssm_alpha.weight"), embd, hv);
      }
      p.norm(n("ssm_norm.weight"), S);
      p.matrix(n("ssm_out.weight"), V, embd, Role::kAttnOutput, l);
    } else {
      p.matrix(n("attn_q.weight"), embd, 2 * q);
      p.matrix(n("attn_k.weight"), embd, kv);
      p.matrix(n("attn_v.weight"), embd, kv, Role::kAttnV, l);
      p.matrix(n("attn_output.weight"), q, embd, Role::kAttnOutput, l);
      p.norm(n("attn_q_norm.weight"), hd);
      p.norm(n("attn_k_norm.weight"), hd);
    }
    if (!is_moe_arch(s.arch)) {
      p.matrix(n("ffn_gate.weight"), embd, s.ff);
      p.matrix(n("ffn_up.weight"), embd, s.ff);
      p.matrix(n("ffn_down.weight"), s.ff, embd, Role::kFfnDown, l);
      continue;
    }
    p.router(n("ffn_gate_inp.weight"), embd, ne);
    p.experts(n("ffn_gate_exps.weight"), embd, eff, ne);
    p.experts(n("ffn_up_exps.weight"), embd, eff, ne);
    p.experts(n("ffn_down_exps.weight"), eff, embd, ne, Role::kFfnDown, l);
    p.out.push_back({n("ffn_gate_inp_shexp.weight"),
                     TensorType::F32,
                     {embd},
                     0.0f,
                     1.0f / std::sqrt(static_cast<float>(embd))});
    p.matrix(n("ffn_gate_shexp.weight"), embd, sff);
    p.matrix(n("ffn_up_shexp.weight"), embd, sff);
    p.matrix(n("ffn_down_shexp.weight"), sff, embd, Role::kFfnDown, l);
  }
  return std::move(p.out);
}

// A gpt-oss layer as llama.cpp's converter writes it: biased q/k/v/o, a sink logit per head,
// post_attention_norm where other archs have ffn_norm, a biased router and biased experts.
void plan_gpt_oss_layer(Planner& p, const SynthSpec& s, int64_t l, uint64_t q, uint64_t kv) {
  auto n = [l](const char* suffix) { return fmt::format("blk.{}.{}", l, suffix); };
  const uint64_t embd = s.embd, ne = s.experts, eff = s.expert_ff;
  p.norm(n("attn_norm.weight"), embd);
  p.norm(n("post_attention_norm.weight"), embd);
  p.matrix(n("attn_q.weight"), embd, q);
  p.bias(n("attn_q.bias"), q);
  p.matrix(n("attn_k.weight"), embd, kv);
  p.bias(n("attn_k.bias"), kv);
  p.matrix(n("attn_v.weight"), embd, kv, Role::kAttnV, l);
  p.bias(n("attn_v.bias"), kv);
  p.matrix(n("attn_output.weight"), q, embd, Role::kAttnOutput, l);
  p.bias(n("attn_output.bias"), embd);
  p.logits(n("attn_sinks.weight"), s.heads);
  p.router(n("ffn_gate_inp.weight"), embd, ne);
  p.bias(n("ffn_gate_inp.bias"), ne);
  p.experts(n("ffn_gate_exps.weight"), embd, eff, ne);
  p.expert_bias(n("ffn_gate_exps.bias"), eff, ne);
  p.experts(n("ffn_up_exps.weight"), embd, eff, ne);
  p.expert_bias(n("ffn_up_exps.bias"), eff, ne);
  p.experts(n("ffn_down_exps.weight"), eff, embd, ne, Role::kFfnDown, l);
  p.expert_bias(n("ffn_down_exps.bias"), embd, ne);
}

// A gemma3 layer as llama.cpp's converter writes it: q/k norms, and norms of the attention's
// and the FFN's outputs (post_attention_norm, post_ffw_norm) beside the usual two. The norms
// are stored as 1 + w, as the converter adds the 1 gemma's RMSNorm applies.
void plan_gemma3_layer(Planner& p, const SynthSpec& s, int64_t l, uint64_t q, uint64_t kv) {
  auto n = [l](const char* suffix) { return fmt::format("blk.{}.{}", l, suffix); };
  const uint64_t embd = s.embd, hd = head_dim_of(s), ff = s.ff;
  p.norm(n("attn_norm.weight"), embd);
  p.matrix(n("attn_q.weight"), embd, q);
  p.matrix(n("attn_k.weight"), embd, kv);
  p.matrix(n("attn_v.weight"), embd, kv, Role::kAttnV, l);
  p.matrix(n("attn_output.weight"), q, embd, Role::kAttnOutput, l);
  p.norm(n("attn_q_norm.weight"), hd);
  p.norm(n("attn_k_norm.weight"), hd);
  p.norm(n("post_attention_norm.weight"), embd);
  p.norm(n("ffn_norm.weight"), embd);
  p.matrix(n("ffn_gate.weight"), embd, ff);
  p.matrix(n("ffn_up.weight"), embd, ff);
  p.matrix(n("ffn_down.weight"), ff, embd, Role::kFfnDown, l);
  p.norm(n("post_ffw_norm.weight"), embd);
}

std::vector<TensorPlan> plan_tensors(const SynthSpec& s, uint64_t vocab, bool tied) {
  if (is_hybrid_arch(s.arch)) return plan_hybrid(s, vocab, tied);
  Planner p{s, {}};
  const uint64_t embd = s.embd, hd = head_dim_of(s);
  const uint64_t q = s.heads * hd, kv = s.kv_heads * hd, ff = s.ff;
  p.matrix("token_embd.weight", embd, vocab);
  p.norm("output_norm.weight", embd);
  if (!tied) p.matrix("output.weight", embd, vocab, Role::kOutput);
  for (int64_t l = 0; l < s.layers; ++l) {
    if (s.arch == "gpt-oss") {
      plan_gpt_oss_layer(p, s, l, q, kv);
      continue;
    }
    if (s.arch == "gemma3") {
      plan_gemma3_layer(p, s, l, q, kv);
      continue;
    }
    auto n = [l](const char* suffix) { return fmt::format("blk.{}.{}", l, suffix); };
    p.norm(n("attn_norm.weight"), embd);
    p.matrix(n("attn_q.weight"), embd, q);
    p.matrix(n("attn_k.weight"), embd, kv);
    p.matrix(n("attn_v.weight"), embd, kv, Role::kAttnV, l);
    if (s.arch == "qwen2") {
      p.bias(n("attn_q.bias"), q);
      p.bias(n("attn_k.bias"), kv);
      p.bias(n("attn_v.bias"), kv);
    }
    if (s.arch == "qwen3" || s.arch == "qwen3moe") {
      p.norm(n("attn_q_norm.weight"), hd);
      p.norm(n("attn_k_norm.weight"), hd);
    }
    p.matrix(n("attn_output.weight"), q, embd, Role::kAttnOutput, l);
    p.norm(n("ffn_norm.weight"), embd);
    if (is_moe_arch(s.arch)) {
      const uint64_t ne = s.experts, eff = s.expert_ff;
      p.router(n("ffn_gate_inp.weight"), embd, ne);
      p.experts(n("ffn_gate_exps.weight"), embd, eff, ne);
      p.experts(n("ffn_up_exps.weight"), embd, eff, ne);
      p.experts(n("ffn_down_exps.weight"), eff, embd, ne, Role::kFfnDown, l);
      continue;
    }
    p.matrix(n("ffn_gate.weight"), embd, ff);
    p.matrix(n("ffn_up.weight"), embd, ff);
    p.matrix(n("ffn_down.weight"), ff, embd, Role::kFfnDown, l);
  }
  return std::move(p.out);
}

// The hybrids' keys beyond the common ones: a quarter of each head rotated (qwen35 and qwen35moe:
// IMRoPE sections as the real files split them; qwen3next: neox, no sections), the shared
// expert, the DeltaNet shape and the layer pattern.
void write_hybrid_hparams(gguf::GgufWriter& w, const SynthSpec& s) {
  const std::string a = s.arch + ".";
  const auto hd = static_cast<uint32_t>(head_dim_of(s));
  const int32_t pairs = static_cast<int32_t>(hd / 8), th = (pairs + 2) / 3;
  w.set_f32(a + "attention.layer_norm_rms_epsilon", 1e-6f);
  w.set_f32(a + "rope.freq_base", 10000000.0f);
  w.set_u32(a + "rope.dimension_count", hd / 4);
  if (s.arch != "qwen3next") w.set_i32s(a + "rope.dimension_sections", {th, th, pairs - 2 * th, 0});
  if (is_moe_arch(s.arch)) {
    w.set_u32(a + "expert_shared_feed_forward_length",
              static_cast<uint32_t>(s.shared_ff > 0 ? s.shared_ff : s.expert_ff));
  }
  w.set_u32(a + "ssm.conv_kernel", static_cast<uint32_t>(s.ssm_conv));
  w.set_u32(a + "ssm.state_size", static_cast<uint32_t>(s.ssm_head_dim));
  w.set_u32(a + "ssm.group_count", static_cast<uint32_t>(s.ssm_k_heads));
  w.set_u32(a + "ssm.time_step_rank", static_cast<uint32_t>(s.ssm_v_heads));
  w.set_u32(a + "ssm.inner_size", static_cast<uint32_t>(s.ssm_v_heads * s.ssm_head_dim));
  w.set_u32(a + "full_attention_interval", static_cast<uint32_t>(s.full_attention_interval));
}

// gpt-oss's keys beyond the common ones, with the real files' rope (base 150000, YaRN factor 32
// over an original context of 4096) and no rope.dimension_count.
void write_gpt_oss_hparams(gguf::GgufWriter& w, const SynthSpec& s) {
  const std::string a = s.arch + ".";
  w.set_f32(a + "attention.layer_norm_rms_epsilon", 1e-5f);
  w.set_f32(a + "rope.freq_base", 150000.0f);
  w.set_u32(a + "attention.sliding_window", static_cast<uint32_t>(s.swa));
  w.set_string(a + "rope.scaling.type", "yarn");
  w.set_f32(a + "rope.scaling.factor", 32.0f);
  w.set_u32(a + "rope.scaling.original_context_length", 4096);
}

// gemma3's keys beyond the common ones, as the converter writes Gemma 3 4B/12B/27B: the global
// layers' rope base 1e6 with linear scaling 8 (the local layers' base, 10000, is llama.cpp's
// default and not written), the window, no rope.dimension_count and no window-pattern key
// (llama.cpp's default period 6 applies).
void write_gemma3_hparams(gguf::GgufWriter& w, const SynthSpec& s) {
  const std::string a = s.arch + ".";
  w.set_f32(a + "attention.layer_norm_rms_epsilon", 1e-6f);
  w.set_f32(a + "rope.freq_base", 1000000.0f);
  w.set_u32(a + "attention.sliding_window", static_cast<uint32_t>(s.swa));
  w.set_string(a + "rope.scaling.type", "linear");
  w.set_f32(a + "rope.scaling.factor", 8.0f);
}

// mistral3's keys beyond llama's, as the converter writes Devstral Small 2 (Ministral 3 has the
// same keys): rope base 1e8, YaRN factor 48 over an original context of 8192 with its betas and
// log multiplier (mscale_all_dim 1) and the attention temperature's beta.
void write_mistral3_hparams(gguf::GgufWriter& w, const SynthSpec& s) {
  const std::string a = s.arch + ".";
  w.set_f32(a + "rope.freq_base", 100000000.0f);
  w.set_string(a + "rope.scaling.type", "yarn");
  w.set_f32(a + "rope.scaling.factor", 48.0f);
  w.set_u32(a + "rope.scaling.original_context_length", 8192);
  w.set_f32(a + "rope.scaling.yarn_beta_fast", 32.0f);
  w.set_f32(a + "rope.scaling.yarn_beta_slow", 1.0f);
  w.set_f32(a + "rope.scaling.yarn_log_multiplier", 1.0f);
  w.set_f32(a + "attention.temperature_scale", 0.1f);
}

void write_hparams(gguf::GgufWriter& w, const SynthSpec& s) {
  const std::string& a = s.arch;
  const bool qwen = a != "llama";  // of the archs below that take the common keys
  w.set_string("general.architecture", a);
  w.set_string("general.name", s.name.empty() ? "synthetic-" + a : s.name);
  w.set_u32(a + ".context_length", static_cast<uint32_t>(s.ctx));
  w.set_u32(a + ".embedding_length", static_cast<uint32_t>(s.embd));
  w.set_u32(a + ".block_count", static_cast<uint32_t>(s.layers));
  // gpt-oss's converter writes the experts' width here.
  w.set_u32(a + ".feed_forward_length", static_cast<uint32_t>(a == "gpt-oss" ? s.expert_ff : s.ff));
  w.set_u32(a + ".attention.head_count", static_cast<uint32_t>(s.heads));
  w.set_u32(a + ".attention.head_count_kv", static_cast<uint32_t>(s.kv_heads));
  const auto hd = static_cast<uint32_t>(head_dim_of(s));
  if (s.head_dim > 0 || a == "gpt-oss" || is_hybrid_arch(a) || a == "gemma3" || a == "mistral3") {
    w.set_u32(a + ".attention.key_length", hd);
    w.set_u32(a + ".attention.value_length", hd);
  }
  if (a == "gpt-oss") {
    write_gpt_oss_hparams(w, s);
  } else if (is_hybrid_arch(a)) {
    write_hybrid_hparams(w, s);
  } else if (a == "gemma3") {
    write_gemma3_hparams(w, s);
  } else if (a == "mistral3") {
    w.set_f32(a + ".attention.layer_norm_rms_epsilon", 1e-5f);
    w.set_u32(a + ".rope.dimension_count", hd);
    write_mistral3_hparams(w, s);
  } else {
    w.set_f32(a + ".attention.layer_norm_rms_epsilon", qwen ? 1e-6f : 1e-5f);
    w.set_f32(a + ".rope.freq_base", qwen ? 1000000.0f : 10000.0f);
    w.set_u32(a + ".rope.dimension_count", hd);
  }
  if (is_moe_arch(a)) {
    w.set_u32(a + ".expert_count", static_cast<uint32_t>(s.experts));
    w.set_u32(a + ".expert_used_count", static_cast<uint32_t>(s.experts_used));
    w.set_u32(a + ".expert_feed_forward_length", static_cast<uint32_t>(s.expert_ff));
  }
  w.set_u32("general.file_type", file_type(s.type, s.mix));
  if (gguf::traits(s.type).block_elems > 1) w.set_u32("general.quantization_version", 2);
}

// Copies tokenizer.* from the vocab file; returns its vocabulary size.
uint64_t copy_vocab(gguf::GgufWriter& w, const std::string& path) {
  auto f = gguf::GgufFile::open(path);
  const auto& tokens = f->get_strings("tokenizer.ggml.tokens");
  if (tokens.empty()) {
    throw SynthError(
        fmt::format("--vocab-from {}: tokenizer.ggml.tokens is empty, expected a "
                    "vocabulary",
                    path));
  }
  w.copy_metadata(*f, "tokenizer.");
  return tokens.size();
}

}  // namespace

void write_synthetic_model(const SynthSpec& s, const std::string& out_path) {
  validate(s);
  gguf::GgufWriter w;
  write_hparams(w, s);
  uint64_t vocab = kByteVocabSize;
  if (s.vocab_from.empty()) {
    write_byte_vocab(w);
  } else {
    vocab = copy_vocab(w, s.vocab_from);
  }
  // llama.cpp's llama converter writes the vocabulary size among the hyperparameters.
  if (s.arch == "mistral3") w.set_u32(s.arch + ".vocab_size", static_cast<uint32_t>(vocab));
  const bool tied =
      s.tie_embeddings.value_or(s.arch == "qwen2" || s.arch == "qwen3" || s.arch == "gemma3");
  const int threads = s.threads > 0
                          ? s.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  uint64_t params = 0, bytes = 0;
  for (auto& plan : plan_tensors(s, vocab, tied)) {
    uint64_t n = 1;
    for (uint64_t d : plan.dims) n *= d;
    params += n;
    bytes += gguf::row_bytes(plan.type, plan.dims[0]) * (n / plan.dims[0]);
    const uint64_t seed = s.seed;
    std::string name = plan.name;
    auto type = plan.type;
    auto dims = plan.dims;
    w.add_tensor(name, type, dims,
                 [plan = std::move(plan), seed, threads](uint8_t* dst, size_t nb) {
                   fill_tensor(plan, seed, threads, dst, nb);
                 });
  }
  w.write(out_path);
  std::string ffn = is_moe_arch(s.arch) ? fmt::format("experts={} used={} expert_ff={}", s.experts,
                                                      s.experts_used, s.expert_ff)
                                        : fmt::format("ff={}", s.ff);
  if (s.arch == "gpt-oss" || s.arch == "gemma3") ffn += fmt::format(" window={}", s.swa);
  log::info(
      "synth: wrote {} ({} embd={} layers={} heads={}/{} {} vocab={} type={}, {:.1f}M "
      "params, {:.1f} MB); weights are RANDOM (seed {}), not a trained model: its output is "
      "gibberish",
      out_path, s.arch, s.embd, s.layers, s.heads, s.kv_heads, ffn, vocab,
      s.mix != Mix::kNone ? mix_name(s.mix) : gguf::type_name(s.type), params / 1e6, bytes / 1e6,
      s.seed);
}

}  // namespace baton::synth
