#pragma once
// Block layouts of the quantized GGUF types, byte for byte as ggml defines them. Internal to
// the kernels module.
#include <cstdint>
#include <cstring>

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
struct BlockQ4_1 {
  uint16_t d;
  uint16_t m;           // f16 min; value q*d + m
  uint8_t qs[kQK / 2];  // nibbles as Q4_0
};
struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];        // bit i: fifth bit of element i (little-endian u32)
  uint8_t qs[kQK / 2];  // low nibbles as Q4_0; value (q-16)*d
};
struct BlockIQ4_NL {
  uint16_t d;
  uint8_t qs[kQK / 2];  // nibbles as Q4_0, each an index into kIQ4NLValues; value v*d
};
struct BlockQ2_K {
  uint8_t scales[kQKK / 16];  // per 16 elements: low 4 bits scale, high 4 bits min
  uint8_t qs[kQKK / 4];       // 2-bit levels (see the layout note below)
  uint16_t d;                 // f16 scale of the scales
  uint16_t dmin;              // f16 scale of the mins; value d*sc*q - dmin*m
};
struct BlockQ3_K {
  uint8_t hmask[kQKK / 8];  // third bit of each level, as Q2_K's index (bit set: no -4)
  uint8_t qs[kQKK / 4];     // low 2 bits, laid out as Q2_K
  uint8_t scales[12];       // 16 scales of 6 bits, biased by 32 (see q3k_scale)
  uint16_t d;
};
struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[12];    // as Q4_K
  uint8_t qh[kQKK / 8];  // bit j of byte l: fifth bit of element l of 32-element block j
  uint8_t qs[kQKK / 2];  // low nibbles as Q4_K; value d*sc*q - dmin*m
};
struct BlockIQ4_XS {
  uint16_t d;
  uint16_t scales_h;     // top 2 bits of the 8 block scales
  uint8_t scales_l[4];   // low 4 bits, two blocks per byte; scale d*(ls-32)
  uint8_t qs[kQKK / 2];  // per 32-element block j: 16 bytes at 16*j, nibbles as IQ4_NL
};
struct BlockMXFP4 {
  uint8_t e;            // E8M0 shared exponent: the block's scale is 2^(e - 128) (e8m0_half)
  uint8_t qs[kQK / 2];  // nibbles as Q4_0, each an index into kMXFP4Values; value v*scale
};
static_assert(sizeof(BlockQ8_0) == 34 && sizeof(BlockQ4_0) == 18);
static_assert(sizeof(BlockQ4_K) == 144 && sizeof(BlockQ6_K) == 210);
static_assert(sizeof(BlockQ4_1) == 20 && sizeof(BlockQ5_0) == 22 && sizeof(BlockIQ4_NL) == 18);
static_assert(sizeof(BlockQ2_K) == 84 && sizeof(BlockQ3_K) == 110 && sizeof(BlockQ5_K) == 176);
static_assert(sizeof(BlockIQ4_XS) == 136 && sizeof(BlockMXFP4) == 17);

// The 16 non-linear levels of IQ4_NL / IQ4_XS (format data, as GGUF defines it).
inline constexpr int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

// The 16 E2M1 (4-bit float) values of MXFP4 at twice their size, so that they are integers:
// codes 0..7 are +0, 0.5, 1, 1.5, 2, 3, 4, 6 and codes 8..15 the same negated. The block scale
// (e8m0_half) is half the format's 2^(e - 127) to match (format data, as GGUF defines it).
inline constexpr int8_t kMXFP4Values[16] = {0, 1,  2,  3,  4,  6,  8,  12,
                                            0, -1, -2, -3, -4, -6, -8, -12};

// 2^(e - 128), the scale of an MXFP4 block with exponent byte e, as ggml reads it: exact for
// every byte (e 0 and 1 give the subnormals 2^-128 and 2^-127; e 255 gives 2^127, where the
// OCP format would say NaN).
inline float e8m0_half(uint8_t e) {
  // For e >= 2 the biased float exponent of 2^(e - 128) is e - 1 with a zero mantissa; below,
  // the one mantissa bit of the subnormal.
  const uint32_t bits = e >= 2 ? uint32_t(e - 1) << 23 : 1u << (21 + e);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// Q2_K / Q3_K layout: element e = 128*n + 32*j + l (n 0..1, j 0..3, l 0..31) is the 2-bit
// field at shift 2*j of qs[32*n + l]; its scale is number 8*n + 2*j + l/16. So 32-element block
// b = 4*n + j reads qs[32*n ..] at shift 2*(b%4), and its halves use scales 2*b and 2*b+1.
// Q3_K's high bit of element e is bit b of hmask[l].

// 6-bit scale i (0..15) of a Q3_K block, still biased by 32: low 4 bits from byte i % 8 (high
// nibble for i >= 8), top 2 bits from byte 8 + i % 4 at shift 2 * (i / 4).
inline int q3k_scale(int i, const uint8_t* s) {
  const int lo = (s[i % 8] >> (4 * (i / 8))) & 0xF;
  const int hi = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
  return lo | (hi << 4);
}

// 6-bit scale of 32-element block j (0..7) of an IQ4_XS block, still biased by 32.
inline int iq4xs_scale(int j, const BlockIQ4_XS& b) {
  return ((b.scales_l[j / 2] >> (4 * (j % 2))) & 0xF) | (((b.scales_h >> (2 * j)) & 3) << 4);
}

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

// The inverse of q4k_scale_min: packs 8 scales and 8 mins (6 bits each) into 12 bytes.
inline void q4k_pack_scales(const uint8_t sc[8], const uint8_t m[8], uint8_t* q) {
  for (int j = 0; j < 4; ++j) {
    q[j] = uint8_t((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
    q[j + 4] = uint8_t((m[j] & 63) | ((m[j + 4] >> 4) << 6));
    q[j + 8] = uint8_t((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
  }
}

}  // namespace baton::kernels
