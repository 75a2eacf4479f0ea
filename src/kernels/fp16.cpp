#include "kernels/fp16.h"

#include <bit>

namespace baton::kernels {

float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
  if (mant == 0) return std::bit_cast<float>(sign);
  // Subnormal half: every one is a normal float, so normalise the mantissa.
  int e = 113;
  while ((mant & 0x400) == 0) {
    mant <<= 1;
    --e;
  }
  return std::bit_cast<float>(sign | (uint32_t(e) << 23) | ((mant & 0x3ff) << 13));
}

uint16_t fp32_to_fp16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000);
  const uint32_t ax = x & 0x7fffffff;
  if (ax > 0x7f800000) return sign | 0x7e00 | ((ax >> 13) & 0x3ff);  // quiet NaN, payload kept
  if (ax >= 0x477ff000) return sign | 0x7c00;  // 65520 and up round to infinity
  if (ax < 0x38800000) {                       // below 2^-14: half subnormal or zero
    if (ax < 0x33000000) return sign;          // below 2^-25 rounds to zero
    const uint32_t m = (ax & 0x7fffff) | 0x800000;
    const int shift = 126 - int(ax >> 23);  // 14..24: value in units of 2^-24
    uint32_t r = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) ++r;
    return sign | uint16_t(r);
  }
  uint32_t r = (ax - 0x38000000) >> 13;  // rebias exponent 127 -> 15
  const uint32_t rem = ax & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) ++r;  // a carry into the exponent is right
  return sign | uint16_t(r);
}

float bf16_to_fp32(uint16_t h) {
  return std::bit_cast<float>(uint32_t(h) << 16);
}

uint16_t fp32_to_bf16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffff) > 0x7f800000) return uint16_t((u >> 16) | 64);  // keep NaN quiet
  return uint16_t((u + (0x7fff + ((u >> 16) & 1))) >> 16);
}

}  // namespace baton::kernels
