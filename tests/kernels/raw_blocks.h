#pragma once
// Random raw blocks of any quantized type, for kernel tests that want bytes no quantizer would
// produce (extreme scales, every bit pattern).
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gguf/tensor_type.h"
#include "kernels/quantize.h"

namespace baton::kernels::testing {

using gguf::TensorType;

// Offsets of the f16 fields (scales and mins) inside one block of each type.
inline std::vector<int> f16_fields(TensorType t) {
  switch (t) {
    case TensorType::Q4_1:
    case TensorType::Q4_K:
    case TensorType::Q5_K:
      return {0, 2};
    case TensorType::Q2_K:
      return {80, 82};
    case TensorType::Q3_K:
      return {108};
    case TensorType::Q6_K:
      return {208};
    case TensorType::MXFP4:
      return {};  // its one scale field is a byte (mxfp4_exponent)
    default:      // Q8_0 Q4_0 Q5_0 IQ4_NL IQ4_XS
      return {0};
  }
}

// An MXFP4 exponent byte. Random: scales 2^-10 .. 2^4. Extreme: the two subnormal scales, the
// smallest normal one and large ones, all with finite products; bytes 253..255, whose codes
// +-8 and +-12 overflow to infinity, are left to the hand-built tests.
inline uint8_t mxfp4_exponent(std::mt19937& rng, bool extreme) {
  const uint8_t kExtremes[] = {0, 1, 2, 64, 127, 128, 200, 230};
  return extreme ? kExtremes[rng() % 8] : uint8_t(118 + rng() % 15);
}

inline void put_f16(uint8_t* p, uint16_t h) {
  std::memcpy(p, &h, 2);
}

// Random raw blocks. extreme = false: random bytes with f16 scales of moderate size and either
// sign. extreme = true: each block's scales drawn from f16 max, min normal, subnormals, zero
// and negatives, its other bytes all 0x00, all 0xFF or random. MXFP4's exponent byte: see
// mxfp4_exponent.
inline std::vector<uint8_t> random_blocks(TensorType t, int64_t n_blocks, uint32_t seed,
                                          bool extreme) {
  const BlockShape shape = block_shape(t);
  std::vector<uint8_t> out(size_t(n_blocks * shape.bytes));
  std::mt19937 rng(seed);
  const uint16_t kExtremes[] = {0x7BFF, 0x0400, 0x0001, 0x03FF, 0x0000, 0xFBFF, 0x8001, 0x3C00};
  for (int64_t b = 0; b < n_blocks; ++b) {
    uint8_t* blk = out.data() + b * shape.bytes;
    const int fill = extreme ? int(rng() % 3) : 2;
    for (int64_t i = 0; i < shape.bytes; ++i) {
      blk[i] = fill == 0 ? 0x00 : fill == 1 ? 0xFF : uint8_t(rng());
    }
    if (t == TensorType::MXFP4) blk[0] = mxfp4_exponent(rng, extreme);
    for (int off : f16_fields(t)) {
      uint16_t h;
      if (extreme) {
        h = kExtremes[rng() % 8];
      } else {  // sign, exponent 2^-12 .. 2^-3, random mantissa
        h = uint16_t((rng() % 2) << 15 | (3 + rng() % 10) << 10 | (rng() & 0x3FF));
      }
      put_f16(blk + off, h);
    }
  }
  return out;
}

}  // namespace baton::kernels::testing
