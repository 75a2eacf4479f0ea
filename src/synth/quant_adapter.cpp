#include "synth/quant_adapter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "synth/synth_model.h"

#if __has_include("kernels/quantize.h")
#include "kernels/quantize.h"
#define BATON_SYNTH_HAVE_KERNELS 1
#else
#define BATON_SYNTH_HAVE_KERNELS 0
#endif

namespace baton::synth {

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t exp = (x >> 23) & 0xff;
  uint32_t mant = x & 0x7fffff;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00 | (mant ? 0x200 : 0));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;  // subnormal half: shift the implicit bit in, round to nearest even
    int shift = 14 - e;
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;  // may carry into the exponent
  return static_cast<uint16_t>(sign | half);
}

namespace {

#if !BATON_SYNTH_HAVE_KERNELS
// Q8_0 block: f16 scale d = amax/127, then 32 int8 q = round(x/d).
void q8_0_row(const float* x, uint8_t* dst, int64_t n) {
  for (int64_t b = 0; b < n / 32; ++b, x += 32, dst += 34) {
    float amax = 0;
    for (int k = 0; k < 32; ++k) amax = std::max(amax, std::fabs(x[k]));
    float d = amax / 127.0f;
    float id = d != 0 ? 1.0f / d : 0.0f;
    uint16_t h = float_to_half(d);
    std::memcpy(dst, &h, 2);
    for (int k = 0; k < 32; ++k)
      dst[2 + k] = static_cast<uint8_t>(static_cast<int8_t>(std::lround(x[k] * id)));
  }
}

// Q4_0 block: f16 scale d = max/-8 (signed max-magnitude value), 16 bytes of nibble pairs
// (element k in the low nibble of byte k, element k+16 in the high one), q = x/d + 8.
void q4_0_row(const float* x, uint8_t* dst, int64_t n) {
  for (int64_t b = 0; b < n / 32; ++b, x += 32, dst += 18) {
    float amax = 0, maxv = 0;
    for (int k = 0; k < 32; ++k) {
      if (std::fabs(x[k]) > amax) {
        amax = std::fabs(x[k]);
        maxv = x[k];
      }
    }
    float d = maxv / -8.0f;
    float id = d != 0 ? 1.0f / d : 0.0f;
    uint16_t h = float_to_half(d);
    std::memcpy(dst, &h, 2);
    for (int k = 0; k < 16; ++k) {
      int lo = std::min(15, static_cast<int>(x[k] * id + 8.5f));
      int hi = std::min(15, static_cast<int>(x[k + 16] * id + 8.5f));
      dst[2 + k] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}
#endif

}  // namespace

void encode_row(gguf::TensorType t, const float* src, void* dst, int64_t n) {
  using gguf::TensorType;
  if (t == TensorType::F32) {
    std::memcpy(dst, src, static_cast<size_t>(n) * 4);
    return;
  }
#if BATON_SYNTH_HAVE_KERNELS
  kernels::quantize_row(t, src, dst, n);
#else
  if (t == TensorType::F16) {
    auto* out = static_cast<uint16_t*>(dst);
    for (int64_t k = 0; k < n; ++k) out[k] = float_to_half(src[k]);
    return;
  }
  if (t == TensorType::Q8_0) return q8_0_row(src, static_cast<uint8_t*>(dst), n);
  if (t == TensorType::Q4_0) return q4_0_row(src, static_cast<uint8_t*>(dst), n);
  throw SynthError(
      fmt::format("--type {}: this build has no quantizer for it yet (needs "
                  "kernels/quantize.h); use f32, f16, q8_0 or q4_0",
                  gguf::type_name(t)));
#endif
}

}  // namespace baton::synth
