#include "model/rope.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

#include "util/log.h"

namespace baton::model {
namespace {

// Llama-3.1 scaling: long wavelengths are slowed by `factor`, short ones kept, and the band in
// between interpolated smoothly.
double llama3_divisor(double inv_freq, const HParams& h) {
  const double wavelen = 2.0 * std::numbers::pi / inv_freq;
  const double low_wavelen = h.rope_orig_ctx / h.rope_low_freq_factor;
  const double high_wavelen = h.rope_orig_ctx / h.rope_high_freq_factor;
  if (wavelen < high_wavelen) return 1.0;
  if (wavelen > low_wavelen) return h.rope_scaling_factor;
  const double smooth = (h.rope_orig_ctx / wavelen - h.rope_low_freq_factor) /
                        (h.rope_high_freq_factor - h.rope_low_freq_factor);
  return 1.0 / ((1.0 - smooth) / h.rope_scaling_factor + smooth);
}

// IMRoPE: pair i takes the position of section i mod sum(sections), the sections interleaved
// t, h, w, t, h, w, ... while each lasts; what none of them covers falls to the fourth section.
// A text token is at position 0 there, so those pairs never rotate.
bool imrope_fixed_pair(int32_t i, const std::array<int32_t, 4>& s) {
  const int32_t total = s[0] + s[1] + s[2] + s[3];
  if (total <= 0) return false;
  const int32_t sector = i % total;
  const bool t = sector % 3 == 0 && sector < 3 * s[0];
  const bool h = sector % 3 == 1 && sector < 3 * s[1];
  const bool w = sector % 3 == 2 && sector < 3 * s[2];
  return !t && !h && !w;
}

// One correction dimension of YaRN: the rotary dimension whose pair turns n_turns times over the
// original context. Float, as llama.cpp computes it, so floor and ceil land alike.
float yarn_corr_dim(int32_t n_rot, int32_t n_ctx_orig, float n_turns, float base) {
  return static_cast<float>(n_rot) *
         std::log(static_cast<float>(n_ctx_orig) / (n_turns * 2 * std::numbers::pi_v<float>)) /
         (2 * std::log(base));
}

// YaRN: pairs below the beta_fast dimension (many turns over the original context) keep their
// frequency, pairs above the beta_slow one are interpolated (divided by factor), with a linear
// ramp between; multiplies each pair's frequency in place.
void yarn_frequencies(const HParams& h, std::vector<double>& inv_freq) {
  const float lo = std::max(0.0f, std::floor(yarn_corr_dim(h.n_rot, h.rope_orig_ctx,
                                                           h.rope_yarn_beta_fast, h.rope_base)));
  const float hi = std::min(
      static_cast<float>(h.n_rot - 1),
      std::ceil(yarn_corr_dim(h.n_rot, h.rope_orig_ctx, h.rope_yarn_beta_slow, h.rope_base)));
  const double freq_scale = 1.0 / h.rope_scaling_factor;
  for (size_t i = 0; i < inv_freq.size(); ++i) {
    const float y = (static_cast<float>(i) - lo) / std::max(0.001f, hi - lo);
    const double keep = 1.0f - std::min(1.0f, std::max(0.0f, y));  // 1: original frequency
    inv_freq[i] *= freq_scale * (1.0 - keep) + keep;
  }
}

// The attention magnitude factor YaRN puts on cos and sin (so on q.k twice): m(1) with
// m(k) = 1 + 0.1 k ln(factor) for factor > 1 (else 1), or m(1) / m(log_mul) when the file sets
// rope.scaling.yarn_log_multiplier, times rope.scaling.attn_factor. Float, in llama.cpp's order
// of operations (its context divides m(1) out and its rope kernel multiplies it back in).
float yarn_mscale(const HParams& h) {
  const float factor = h.rope_scaling_factor;
  auto m = [factor](float k) { return factor <= 1.0f ? 1.0f : 0.1f * k * std::log(factor) + 1.0f; };
  float attn = h.rope_yarn_log_mul != 0.0f ? m(1.0f) / m(h.rope_yarn_log_mul) : m(1.0f);
  attn *= 1.0f / (1.0f + 0.1f * std::log(factor));
  attn *= h.rope_attn_factor;
  const float freq_scale = 1.0f / factor;
  return attn * (1.0f + 0.1f * std::log(1.0f / freq_scale));
}

}  // namespace

Rope::Rope(const HParams& h, const std::vector<float>& freq_divisors)
    : mode_(h.rope_mode), head_dim_(h.head_dim) {
  const int32_t pairs = h.n_rot / 2;
  inv_freq_.resize(pairs);
  for (int32_t i = 0; i < pairs; ++i) {
    inv_freq_[i] = std::pow(static_cast<double>(h.rope_base), -2.0 * i / h.n_rot);
  }
  if (h.rope_mode == RopeMode::Imrope) {
    // A zero frequency gives the angle 0 at every position: cos 1, sin 0, the pair unchanged.
    for (int32_t i = 0; i < pairs; ++i) {
      if (imrope_fixed_pair(i, h.rope_sections)) inv_freq_[i] = 0.0;
    }
  }
  if (!freq_divisors.empty()) {
    for (int32_t i = 0; i < pairs; ++i) inv_freq_[i] /= freq_divisors[i];
  } else if (h.rope_scaling_type == "linear") {
    pos_scale_ = 1.0 / h.rope_scaling_factor;
  } else if (h.rope_scaling_type == "llama3") {
    for (int32_t i = 0; i < pairs; ++i) inv_freq_[i] /= llama3_divisor(inv_freq_[i], h);
  } else if (h.rope_scaling_type == "yarn") {
    yarn_frequencies(h, inv_freq_);
    mscale_ = yarn_mscale(h);
  } else if (!h.rope_scaling_type.empty()) {
    log::warn(
        "rope.scaling.type '{}' is not implemented; using unscaled RoPE (fine within the "
        "original context length)",
        h.rope_scaling_type);
  }
}

float attention_temperature(float scale, int32_t floor_len, int32_t pos) {
  if (scale == 0.0f || floor_len <= 0) return 1.0f;
  const float p = static_cast<float>(pos);
  const double steps = std::floor(p / static_cast<float>(floor_len)) + 1.0;
  return static_cast<float>(std::log(steps) * scale + 1.0);
}

void Rope::angles(int32_t pos, float* cos_out, float* sin_out) const {
  const double p = pos * pos_scale_;
  for (size_t i = 0; i < inv_freq_.size(); ++i) {
    const double a = p * inv_freq_[i];
    cos_out[i] = static_cast<float>(std::cos(a)) * mscale_;
    sin_out[i] = static_cast<float>(std::sin(a)) * mscale_;
  }
}

void Rope::apply(float* v, int32_t n_heads, const float* cos_v, const float* sin_v) const {
  const int32_t pairs = n_pairs();
  for (int32_t h = 0; h < n_heads; ++h) {
    float* x = v + static_cast<int64_t>(h) * head_dim_;
    for (int32_t i = 0; i < pairs; ++i) {
      // normal: (2i, 2i+1); neox: (i, i + n_rot/2)
      const int32_t a = mode_ == RopeMode::Normal ? 2 * i : i;
      const int32_t b = mode_ == RopeMode::Normal ? 2 * i + 1 : i + pairs;
      const float x0 = x[a], x1 = x[b];
      x[a] = x0 * cos_v[i] - x1 * sin_v[i];
      x[b] = x0 * sin_v[i] + x1 * cos_v[i];
    }
  }
}

}  // namespace baton::model
