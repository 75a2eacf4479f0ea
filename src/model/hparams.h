#pragma once
// Hyperparameters of a llama-family model, read from GGUF metadata ({arch}.* keys).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "gguf/gguf_file.h"

namespace baton::model {

enum class Arch {
  Llama,
  Qwen2,
  Qwen3,
  Qwen3Moe,
  GptOss,
  Qwen35,
  Qwen35Moe,
  Qwen3Next,
  Gemma3,
  Mistral3
};
const char* arch_name(Arch a);
// The hybrid architectures: gated DeltaNet layers between gated attention layers (qwen35 with
// dense FFNs, qwen35moe and qwen3next with routed experts and a shared expert).
bool is_hybrid_arch(Arch a);
// Whether the architecture normalises each head of q and k (RMSNorm with head_dim weights)
// before rope.
bool has_qk_norm(Arch a);

// How RoPE pairs dimensions: "normal" rotates adjacent pairs (2i, 2i+1), "neox" rotates
// (i, i + n_rot/2). "imrope" pairs as neox, and gives pair i the position of section
// i mod sum(sections) taken in turn (t, h, w, t, ...): text tokens have the same position in t, h
// and w, and position 0 in the fourth section, which the interleave reaches past the others.
enum class RopeMode { Normal, Neox, Imrope };

// How a mixture-of-experts layer picks and weighs its experts from the router's logits.
// SoftmaxTopK: softmax over all experts, the k most probable, their probabilities (renormalised
// to sum 1 when norm_topk). TopKSoftmax: the k largest logits, then a softmax over those k alone
// (gpt-oss; the router's bias is part of the logits either way).
enum class ExpertGating { SoftmaxTopK, TopKSoftmax };

// Each expert's activation: Silu is silu(gate) * up; SwigluOai (gpt-oss) clamps first,
// x = min(gate, limit), y = clamp(up, -limit, limit), and gives x * sigmoid(alpha x) * (y + 1).
enum class ExpertAct { Silu, SwigluOai };

// A dense FFN's activation of its gate: silu(gate) * up, or (gemma3) GELU's tanh form,
// 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715 g^3))) * up.
enum class FfnAct { Silu, GeluTanh };

struct MoeParams {
  int32_t n_expert = 0;  // 0: every layer's FFN is dense
  int32_t n_used = 0;    // experts each token goes through (k)
  int32_t n_ff = 0;      // rows of each expert's gate and up matrices
  ExpertGating gating = ExpertGating::SoftmaxTopK;
  bool norm_topk = true;
  ExpertAct act = ExpertAct::Silu;
  float swiglu_alpha = 1.702f;  // SwigluOai only
  float swiglu_limit = 7.0f;    // SwigluOai only
};

// The gated DeltaNet layers of a hybrid recurrent model (qwen35, qwen35moe, qwen3next), from its
// ssm.* keys.
struct SsmParams {
  int32_t d_conv = 0;     // ssm.conv_kernel: taps of the causal convolution over q|k|v
  int32_t head_dim = 0;   // ssm.state_size: width of every key and value head
  int32_t n_k_heads = 0;  // ssm.group_count: query/key heads
  int32_t n_v_heads = 0;  // ssm.time_step_rank: value heads (a multiple of the key heads)
  int32_t d_inner = 0;    // ssm.inner_size: n_v_heads * head_dim
  // Which key head value head h reads: qwen35/qwen35moe files store value heads tiled (key head
  // h mod n_k_heads, as their converter reorders them), qwen3next files grouped by key head
  // (key head h / (n_v_heads / n_k_heads), the order of the original weights).
  bool v_heads_grouped = false;

  int32_t key_head(int32_t h) const {
    return v_heads_grouped ? h / (n_v_heads / n_k_heads) : h % n_k_heads;
  }

  int32_t key_dim() const { return n_k_heads * head_dim; }
  int32_t value_dim() const { return n_v_heads * head_dim; }
  int32_t conv_dim() const { return 2 * key_dim() + value_dim(); }
  // Floats of one sequence's state in one layer: the last d_conv - 1 inputs of the convolution,
  // and a head_dim x head_dim matrix per value head.
  int64_t conv_floats() const { return int64_t(d_conv - 1) * conv_dim(); }
  int64_t matrix_floats() const { return int64_t(n_v_heads) * head_dim * head_dim; }
};

struct HParams {
  Arch arch = Arch::Llama;
  std::string arch_key;  // the general.architecture string, prefix of every key
  std::string name;
  int32_t n_vocab = 0;
  int32_t n_embd = 0;
  int32_t n_layer = 0;
  int32_t n_ff = 0;  // dense FFN width; may be 0 for a mixture-of-experts model
  int32_t n_head = 0;
  int32_t n_head_kv = 0;
  int32_t head_dim = 0;
  int32_t n_rot = 0;  // rotated dimensions per head (<= head_dim)
  int32_t n_ctx_train = 0;
  float rms_eps = 1e-5f;
  float rope_base = 10000.0f;
  RopeMode rope_mode = RopeMode::Normal;
  // Scaling without a rope_freqs tensor: "linear" divides positions by factor; "llama3" applies
  // the Llama-3.1 wavelength-dependent factors; "yarn" blends interpolated and original
  // frequencies by wavelength (corrections between beta_fast and beta_slow rotations over the
  // original context) and scales q and k by the attention magnitude factor.
  std::string rope_scaling_type;  // "" = none
  float rope_scaling_factor = 1.0f;
  int32_t rope_orig_ctx = 0;
  float rope_low_freq_factor = 1.0f;
  float rope_high_freq_factor = 4.0f;
  float rope_yarn_beta_fast = 32.0f;
  float rope_yarn_beta_slow = 1.0f;
  float rope_attn_factor = 1.0f;  // rope.scaling.attn_factor: extra factor on the magnitude
  // Sliding-window attention: a windowed layer's token at position p attends to positions q
  // with p - q < n_swa only. swa[il] says which layers are windowed (empty: none).
  int32_t n_swa = 0;
  std::vector<bool> swa;
  // > 0: the windowed layers rotate with their own base and no scaling (gemma3: its local
  // layers, rope.freq_base_swa or 10000); 0: every layer uses the rope above.
  float rope_base_swa = 0.0f;
  // YaRN's magnitude from rope.scaling.yarn_log_multiplier (mistral3's mscale_all_dim): when
  // set, the magnitude is mscale(factor, 1) / mscale(factor, log_mul); 0 = not set.
  float rope_yarn_log_mul = 0.0f;
  MoeParams moe;
  int32_t n_ff_shared = 0;  // the shared expert's width beside the routed ones; 0: none
  std::array<int32_t, 4> rope_sections{};  // RopeMode::Imrope only
  // Hybrid models: which layers are gated DeltaNet (the rest attend); empty: none.
  std::vector<uint8_t> recurrent;
  SsmParams ssm;
  FfnAct ffn_act = FfnAct::Silu;
  // gemma3: each sublayer's output is RMS-normed (post_attention_norm, post_ffw_norm) before
  // the residual add.
  bool post_norms = false;
  float embd_scale = 1.0f;     // token embeddings times this on input (gemma3: sqrt(n_embd))
  float attn_scale = 0.0f;     // q.k scale; 0 = 1/sqrt(head_dim)
  float final_softcap = 0.0f;  // > 0: logits = c tanh(logits / c)
  // Llama-4-style attention temperature (mistral3): q at position p times
  // 1 + attn_temp_scale * ln(floor(p / attn_temp_floor) + 1); 0 = none.
  float attn_temp_scale = 0.0f;
  int32_t attn_temp_floor = 0;

  int32_t q_dim() const { return n_head * head_dim; }
  int32_t kv_dim() const { return n_head_kv * head_dim; }
  bool is_moe() const { return moe.n_expert > 0; }
  float attention_scale() const;
  bool is_recurrent(int32_t il) const { return !recurrent.empty() && recurrent[il] != 0; }
  bool is_hybrid() const { return !recurrent.empty(); }
  // Layers that attend, and so hold KV.
  int32_t n_attention_layers() const;
  // An attention layer's query rows carry a per-head output gate: [q, gate] per head.
  bool gated_attention() const { return is_hybrid_arch(arch); }
  // Layer il's attention window in positions; 0 = the whole context.
  int32_t window(int32_t il) const {
    return il >= 0 && static_cast<size_t>(il) < swa.size() && swa[il] ? n_swa : 0;
  }
};

// Throws std::runtime_error naming the key/architecture when the file is not a usable model.
HParams read_hparams(const gguf::GgufFile& f);

// The hybrid-model keys (ssm.*, the layer pattern, IMRoPE sections, the shared expert) into h
// (hparams_hybrid.cpp). Throws std::runtime_error naming the key and the fix.
void read_hybrid_hparams(const gguf::GgufFile& f, HParams& h);

}  // namespace baton::model
