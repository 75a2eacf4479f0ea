#include "model/hparams_arch.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

namespace baton::model {
namespace {

// llama.cpp reads the norm epsilon of these architectures as a required key: a file without it
// was not written by a converter that knows the model.
void require_rms_eps(const gguf::GgufFile& f, const std::string& a, const HParams& h) {
  const std::string key = a + "attention.layer_norm_rms_epsilon";
  if (!f.has(key)) {
    throw std::runtime_error(
        fmt::format("{}: required key {} is missing (a {} model's RMS norms need it; convert the "
                    "model again with a current llama.cpp)",
                    f.path(), key, h.arch_key));
  }
}

// A float key that must be finite and at least `min` (exclusive when `strict`).
float float_key(const gguf::GgufFile& f, const std::string& key, double fallback, double min,
                bool strict, const char* what) {
  const double v = f.get_float_or(key, fallback);
  if (!std::isfinite(v) || v < min || (strict && v == min)) {
    throw std::runtime_error(
        fmt::format("{}: {} = {} is out of range ({} must be {} {}); fix "
                    "the key or convert the model again",
                    f.path(), key, v, what, strict ? ">" : ">=", min));
  }
  return static_cast<float>(v);
}

}  // namespace

void read_gemma3(const gguf::GgufFile& f, const std::string& a, HParams& h) {
  require_rms_eps(f, a, h);
  // No pattern key in the converted files: 5 windowed layers, then 1 global.
  read_window(f, a, h, 6, false);
  if (h.n_swa > 0) {
    h.rope_base_swa =
        float_key(f, a + "rope.freq_base_swa", 10000.0, 0.0, true, "the local layers' rope base");
  }
  h.final_softcap =
      float_key(f, a + "final_logit_softcapping", 0.0, 0.0, false, "the logit softcap (0 = none)");
  h.embd_scale = std::sqrt(static_cast<float>(h.n_embd));
  // The 27B model (62 layers) scales queries by its query_pre_attn_scalar, embd / heads; the
  // others by the head dimension, as llama.cpp does.
  const int32_t scale_dim = h.n_layer == 62 ? h.n_embd / h.n_head : h.head_dim;
  h.attn_scale = 1.0f / std::sqrt(static_cast<float>(scale_dim));
  h.ffn_act = FfnAct::GeluTanh;
  h.post_norms = true;
}

void read_mistral3(const gguf::GgufFile& f, const std::string& a, HParams& h) {
  require_rms_eps(f, a, h);
  if (f.get_int_or(a + "expert_count", 0) > 0) {
    throw std::runtime_error(fmt::format(
        "{}: {}expert_count is set: mixture-of-experts mistral3 models are not supported (the "
        "dense Ministral 3 and Devstral Small 2 are)",
        f.path(), a));
  }
  if (h.n_rot != h.head_dim) {
    throw std::runtime_error(
        fmt::format("{}: {}rope.dimension_count {} differs from the head dimension {}: mistral3 "
                    "rotates whole heads; fix the key or convert the model again",
                    f.path(), a, h.n_rot, h.head_dim));
  }
  h.rope_yarn_beta_fast = float_key(f, a + "rope.scaling.yarn_beta_fast", 32.0, 0.0, true,
                                    "YaRN's fast correction, in rotations,");
  h.rope_yarn_beta_slow = float_key(f, a + "rope.scaling.yarn_beta_slow", 1.0, 0.0, true,
                                    "YaRN's slow correction, in rotations,");
  h.rope_yarn_log_mul = float_key(f, a + "rope.scaling.yarn_log_multiplier", 0.0, 0.0, false,
                                  "YaRN's magnitude multiplier (0 = none)");
  h.attn_temp_scale = float_key(f, a + "attention.temperature_scale", 0.0, 0.0, false,
                                "the attention temperature's beta (0 = none)");
  // The temperature steps once per original context length, as llama.cpp takes it.
  if (h.attn_temp_scale != 0.0f) h.attn_temp_floor = h.rope_orig_ctx;
}

}  // namespace baton::model
