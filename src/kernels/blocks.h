#pragma once
// Block layouts of the quantized GGUF types, byte for byte as ggml defines them. Internal to
// the kernels module.
#include <cstdint>

namespace baton::kernels {

inline constexpr int kQK = 32;    // elements per Q8_0 / Q4_0 block and per matmul x block
inline constexpr int kQKK = 256;  // elements per K-quant super-block

struct BlockQ8_0 {
  uint16_t d;  // f16 scale
  int8_t qs[kQK];
};
struct BlockQ4_0 {
  uint16_t d;
  uint8_t qs[kQK / 2];  // low nibbles: elements 0..15, high nibbles: 16..31; value (q-8)*d
};
struct BlockQ4_K {
  uint16_t d;          // f16 scale of the 6-bit sub-block scales
  uint16_t dmin;       // f16 scale of the 6-bit sub-block mins
  uint8_t scales[12];  // 8 scales + 8 mins, 6 bits each, packed (see q4k_scale_min)
  uint8_t qs[kQKK / 2];
};
struct BlockQ6_K {
  uint8_t ql[kQKK / 2];  // low 4 bits
  uint8_t qh[kQKK / 4];  // high 2 bits
  int8_t scales[kQKK / 16];
  uint16_t d;
};
static_assert(sizeof(BlockQ8_0) == 34 && sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_K) == 144 && sizeof(BlockQ6_K) == 210);

// Scale and min of sub-block j (0..7) of a Q4_K block, as ggml's get_scale_min_k4.
inline void q4k_scale_min(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

}  // namespace baton::kernels
