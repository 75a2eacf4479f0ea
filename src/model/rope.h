#pragma once
// Rotary position embedding. Angles come from a per-pair inverse frequency computed once in
// double, so a position's rotation is the same bits whichever batch it appears in.
#include <cstdint>
#include <vector>

#include "model/hparams.h"

namespace baton::model {

class Rope {
 public:
  // freq_divisors: optional per-pair factors (the rope_freqs tensor), empty for none.
  Rope(const HParams& h, const std::vector<float>& freq_divisors);

  int32_t n_pairs() const { return static_cast<int32_t>(inv_freq_.size()); }
  // Fills cos/sin (n_pairs each) for one position, times the magnitude factor (YaRN; else 1).
  void angles(int32_t pos, float* cos_out, float* sin_out) const;
  // Rotates n_heads consecutive heads of head_dim floats in place.
  void apply(float* v, int32_t n_heads, const float* cos_v, const float* sin_v) const;

 private:
  std::vector<double> inv_freq_;
  RopeMode mode_;
  int32_t head_dim_;
  double pos_scale_ = 1.0;
  float mscale_ = 1.0f;  // YaRN's magnitude factor on cos and sin
};

}  // namespace baton::model
