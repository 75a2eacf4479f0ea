#include "model/hparams.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "model/hparams_arch.h"

namespace baton::model {

const char* arch_name(Arch a) {
  switch (a) {
    case Arch::Llama:
      return "llama";
    case Arch::Qwen2:
      return "qwen2";
    case Arch::Qwen3:
      return "qwen3";
    case Arch::Qwen3Moe:
      return "qwen3moe";
    case Arch::GptOss:
      return "gpt-oss";
    case Arch::Qwen35:
      return "qwen35";
    case Arch::Qwen35Moe:
      return "qwen35moe";
    case Arch::Qwen3Next:
      return "qwen3next";
    case Arch::Gemma3:
      return "gemma3";
    case Arch::Mistral3:
      return "mistral3";
  }
  return "?";
}

bool is_hybrid_arch(Arch a) {
  return a == Arch::Qwen35 || a == Arch::Qwen35Moe || a == Arch::Qwen3Next;
}

bool has_qk_norm(Arch a) {
  return a == Arch::Qwen3 || a == Arch::Qwen3Moe || a == Arch::Gemma3 || is_hybrid_arch(a);
}

float HParams::attention_scale() const {
  return attn_scale > 0 ? attn_scale : 1.0f / std::sqrt(static_cast<float>(head_dim));
}

int32_t HParams::n_attention_layers() const {
  int32_t n = 0;
  for (int32_t il = 0; il < n_layer; ++il) n += is_recurrent(il) ? 0 : 1;
  return n;
}

namespace {

Arch parse_arch(const std::string& s, const std::string& path) {
  if (s == "llama") return Arch::Llama;
  if (s == "qwen2") return Arch::Qwen2;
  if (s == "qwen3") return Arch::Qwen3;
  if (s == "qwen3moe") return Arch::Qwen3Moe;
  if (s == "gpt-oss") return Arch::GptOss;
  if (s == "qwen35") return Arch::Qwen35;
  if (s == "qwen35moe") return Arch::Qwen35Moe;
  if (s == "qwen3next") return Arch::Qwen3Next;
  if (s == "gemma3") return Arch::Gemma3;
  if (s == "mistral3") return Arch::Mistral3;
  throw std::runtime_error(
      fmt::format("{}: general.architecture '{}' is not supported (supported: llama, qwen2, "
                  "qwen3, qwen3moe, gpt-oss, qwen35, qwen35moe, qwen3next, gemma3, mistral3)",
                  path, s));
}

int32_t positive(const gguf::GgufFile& f, const std::string& key, int64_t v, int64_t max) {
  if (v <= 0 || v > max) {
    throw std::runtime_error(
        fmt::format("{}: {} = {} is out of range (expected 1..{})", f.path(), key, v, max));
  }
  return static_cast<int32_t>(v);
}

// The expert keys of a mixture-of-experts architecture. The expert FFN width may be absent (the
// loader then takes it from the expert tensors' shape).
MoeParams read_moe(const gguf::GgufFile& f, const std::string& a) {
  MoeParams m;
  const std::string count = a + "expert_count", used = a + "expert_used_count";
  for (const auto& key : {count, used}) {
    if (!f.has(key)) {
      throw std::runtime_error(
          fmt::format("{}: required key {} is missing (a {} file names its experts; convert the "
                      "model again with a current llama.cpp)",
                      f.path(), key, a.substr(0, a.size() - 1)));
    }
  }
  m.n_expert = positive(f, count, f.get_int(count), 4096);
  const int64_t k = f.get_int(used);
  if (k <= 0 || k > m.n_expert) {
    throw std::runtime_error(
        fmt::format("{}: {} = {} is out of range: each token uses 1..{} experts ({} = {}); set "
                    "it to the model's number of active experts",
                    f.path(), used, k, m.n_expert, count, m.n_expert));
  }
  m.n_used = static_cast<int32_t>(k);
  const std::string ff = a + "expert_feed_forward_length";
  if (f.has(ff)) m.n_ff = positive(f, ff, f.get_int(ff), 1 << 20);
  return m;
}

// The rope keys: base, pair layout (from the architecture) and scaling.
void read_rope(const gguf::GgufFile& f, const std::string& a, HParams& h) {
  h.rope_base = static_cast<float>(f.get_float_or(a + "rope.freq_base", 10000.0));
  if (!(h.rope_base > 0)) {
    throw std::runtime_error(fmt::format("{}: {}rope.freq_base must be > 0", f.path(), a));
  }
  h.rope_mode =
      h.arch == Arch::Llama || h.arch == Arch::Mistral3 ? RopeMode::Normal : RopeMode::Neox;
  h.rope_scaling_type = f.get_string_or(a + "rope.scaling.type", "");
  if (h.rope_scaling_type == "none") h.rope_scaling_type.clear();
  h.rope_scaling_factor = static_cast<float>(f.get_float_or(a + "rope.scaling.factor", 1.0));
  const int64_t orig = f.get_int_or(a + "rope.scaling.original_context_length", 0);
  h.rope_orig_ctx = orig > 0 && orig <= (1 << 24) ? static_cast<int32_t>(orig) : h.n_ctx_train;
  h.rope_low_freq_factor =
      static_cast<float>(f.get_float_or(a + "rope.scaling.low_freq_factor", 1.0));
  h.rope_high_freq_factor =
      static_cast<float>(f.get_float_or(a + "rope.scaling.high_freq_factor", 4.0));
  if (!h.rope_scaling_type.empty() && !(h.rope_scaling_factor > 0)) {
    throw std::runtime_error(fmt::format("{}: {}rope.scaling.factor must be > 0", f.path(), a));
  }
  h.rope_attn_factor = static_cast<float>(f.get_float_or(a + "rope.scaling.attn_factor", 1.0));
  if (!(h.rope_attn_factor > 0)) {
    throw std::runtime_error(
        fmt::format("{}: {}rope.scaling.attn_factor must be > 0", f.path(), a));
  }
}

}  // namespace

// The sliding window and which layers use it. The pattern key, when an integer, is a period p:
// layer il is windowed when il % p < p - 1 (p = 0: every layer); without it, default_period.
// An array there is ignored, as llama.cpp does; another type is refused. Without the window key
// (or with 0) a required window is an error; otherwise every layer attends to everything.
void read_window(const gguf::GgufFile& f, const std::string& a, HParams& h, int64_t default_period,
                 bool required) {
  const std::string key = a + "attention.sliding_window";
  if (!f.has(key) && required) {
    throw std::runtime_error(
        fmt::format("{}: required key {} is missing (a {} model attends over a sliding window "
                    "in some layers; convert the model again with a current llama.cpp)",
                    f.path(), key, h.arch_key));
  }
  if (!required && f.get_int_or(key, 0) == 0) return;
  h.n_swa = positive(f, key, f.get_int(key), 1 << 24);
  int64_t period = default_period;
  const std::string pattern = a + "attention.sliding_window_pattern";
  if (const auto* v = f.find(pattern); v != nullptr && gguf::is_integer_type(v->type)) {
    period = f.get_int(pattern);
    if (period < 0 || period > (1 << 20)) {
      throw std::runtime_error(fmt::format(
          "{}: {} = {} is out of range (expected 0..{}: every p-th layer attends to the whole "
          "context, 0 = none)",
          f.path(), pattern, period, 1 << 20));
    }
  } else if (v != nullptr && v->type != gguf::ValueType::ARRAY) {
    throw std::runtime_error(fmt::format(
        "{}: {} is not an integer (a period p: every p-th layer attends to the whole context); "
        "set it to an integer or remove it for the default period {}",
        f.path(), pattern, default_period));
  }
  h.swa.assign(h.n_layer, false);
  for (int32_t il = 0; il < h.n_layer; ++il) {
    h.swa[il] = period == 0 || il % period < period - 1;
  }
}

HParams read_hparams(const gguf::GgufFile& f) {
  HParams h;
  h.arch_key = f.get_string_or("general.architecture", "");
  if (h.arch_key.empty()) {
    throw std::runtime_error(f.path() + ": general.architecture is missing (not a model file?)");
  }
  h.arch = parse_arch(h.arch_key, f.path());
  h.name = f.get_string_or("general.name", h.arch_key);
  const std::string a = h.arch_key + ".";
  auto req = [&](const char* k, int64_t max) {
    std::string key = a + k;
    if (!f.has(key)) throw std::runtime_error(f.path() + ": required key " + key + " is missing");
    return positive(f, key, f.get_int(key), max);
  };
  h.n_embd = req("embedding_length", 1 << 16);
  h.n_layer = req("block_count", 1024);
  if (h.arch == Arch::Qwen3Moe || h.arch == Arch::GptOss || h.arch == Arch::Qwen35Moe ||
      h.arch == Arch::Qwen3Next) {
    h.moe = read_moe(f, a);
    // A MoE file may carry a dense width it never uses; it is not needed.
    const int64_t ff = f.get_int_or(a + "feed_forward_length", 0);
    h.n_ff = ff > 0 && ff <= (1 << 20) ? static_cast<int32_t>(ff) : 0;
  } else {
    h.n_ff = req("feed_forward_length", 1 << 20);
  }
  h.n_head = req("attention.head_count", 1024);
  h.n_head_kv = positive(f, a + "attention.head_count_kv",
                         f.get_int_or(a + "attention.head_count_kv", h.n_head), 1024);
  if (h.n_head % h.n_head_kv != 0) {
    throw std::runtime_error(
        fmt::format("{}: {}attention.head_count {} is not a multiple of "
                    "head_count_kv {}",
                    f.path(), a, h.n_head, h.n_head_kv));
  }
  int64_t default_hd = h.n_embd / h.n_head;
  h.head_dim = positive(f, a + "attention.key_length",
                        f.get_int_or(a + "attention.key_length", default_hd), 4096);
  int64_t vlen = f.get_int_or(a + "attention.value_length", h.head_dim);
  if (vlen != h.head_dim) {
    throw std::runtime_error(
        fmt::format("{}: {}attention.value_length {} differs from key_length "
                    "{} (not supported)",
                    f.path(), a, vlen, h.head_dim));
  }
  if (h.head_dim % 2 != 0) {
    throw std::runtime_error(
        fmt::format("{}: head dimension {} must be even", f.path(), h.head_dim));
  }
  h.n_rot = positive(f, a + "rope.dimension_count",
                     f.get_int_or(a + "rope.dimension_count", h.head_dim), h.head_dim);
  if (h.n_rot % 2 != 0) {
    throw std::runtime_error(
        fmt::format("{}: {}rope.dimension_count {} must be even", f.path(), a, h.n_rot));
  }
  h.n_ctx_train =
      positive(f, a + "context_length", f.get_int_or(a + "context_length", 2048), 1 << 24);
  h.rms_eps = static_cast<float>(f.get_float_or(a + "attention.layer_norm_rms_epsilon", 1e-5));
  read_rope(f, a, h);
  if (h.arch == Arch::Gemma3) read_gemma3(f, a, h);
  if (h.arch == Arch::Mistral3) read_mistral3(f, a, h);
  if (h.arch == Arch::GptOss) {
    read_window(f, a, h, 2, true);
    // Router logits carry a bias; top-k of them, then a softmax over the k chosen; clamped
    // SwiGLU experts with biases.
    h.moe.gating = ExpertGating::TopKSoftmax;
    h.moe.norm_topk = false;
    h.moe.act = ExpertAct::SwigluOai;
  }
  if (is_hybrid_arch(h.arch)) read_hybrid_hparams(f, h);
  return h;
}

}  // namespace baton::model
