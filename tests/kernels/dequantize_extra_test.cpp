// get_row on one hand-built block of each of Q4_1 Q5_0 IQ4_NL Q2_K Q3_K Q5_K IQ4_XS; the expected
// values are worked out by hand from the GGUF layouts (comments show the arithmetic).
#include <gtest/gtest.h>

#include <cstring>
#include <utility>
#include <vector>

#include "kernels/matmul.h"
#include "kernels/quantize.h"

namespace baton::kernels {
namespace {

using gguf::TensorType;

std::vector<float> row_of(TensorType t, const std::vector<uint8_t>& block) {
  const int64_t n = block_shape(t).elems;
  EXPECT_EQ(int64_t(block.size()), block_shape(t).bytes);
  std::vector<float> out(static_cast<size_t>(n));
  get_row(MatrixView{t, block.data(), 1, n, block.size()}, 0, out.data());
  return out;
}

void put16(std::vector<uint8_t>& b, size_t at, uint16_t v) {
  std::memcpy(&b[at], &v, 2);
}

// (element, value) pairs of a 256-element row.
void expect_elements(const std::vector<float>& row,
                     std::initializer_list<std::pair<int, float>> want, const char* what) {
  for (auto [i, v] : want) EXPECT_EQ(row[size_t(i)], v) << what << " element " << i;
}

constexpr uint16_t kHalf = 0x3800, kQuarter = 0x3400, kOne = 0x3C00, kMinusTwo = 0xC000;

TEST(DequantizeExtra, Q4_1) {
  // d 0.5, m -2; byte i: low nibble i (element i), high nibble 15 - i (element 16 + i).
  std::vector<uint8_t> b(20);
  put16(b, 0, kHalf);
  put16(b, 2, kMinusTwo);
  for (int i = 0; i < 16; ++i) b[size_t(4 + i)] = uint8_t(i | (15 - i) << 4);
  const std::vector<float> want = {-2,  -1.5, -1,  -0.5, 0,   0.5, 1,    1.5, 2,    2.5, 3,
                                   3.5, 4,    4.5, 5,    5.5, 5.5, 5,    4.5, 4,    3.5, 3,
                                   2.5, 2,    1.5, 1,    0.5, 0,   -0.5, -1,  -1.5, -2};
  EXPECT_EQ(row_of(TensorType::Q4_1, b), want);
}

TEST(DequantizeExtra, Q5_0) {
  // d 0.25; high bits qh = 0xFF008001: bits 0, 15 and 24..31. Byte i: low nibble i, high 0.
  // Element i < 16: (i | bit_i << 4) - 16; element 16 + i: (0 | bit_(16+i) << 4) - 16.
  std::vector<uint8_t> b(22);
  put16(b, 0, kQuarter);
  b[2] = 0x01, b[3] = 0x80, b[4] = 0x00, b[5] = 0xFF;
  for (int i = 0; i < 16; ++i) b[size_t(6 + i)] = uint8_t(i);
  const std::vector<float> want = {
      0,  -3.75, -3.5, -3.25, -3, -2.75, -2.5, -2.25, -2, -1.75, -1.5, -1.25, -1, -0.75, -0.5, 3.75,
      -4, -4,    -4,   -4,    -4, -4,    -4,   -4,    0,  0,     0,    0,     0,  0,     0,    0};
  EXPECT_EQ(row_of(TensorType::Q5_0, b), want);
}

TEST(DequantizeExtra, IQ4_NL) {
  // d 0.5; byte i: low nibble i, high 15 - i; values are half the format's table.
  std::vector<uint8_t> b(18);
  put16(b, 0, kHalf);
  for (int i = 0; i < 16; ++i) b[size_t(2 + i)] = uint8_t(i | (15 - i) << 4);
  const std::vector<float> half = {-63.5, -52, -41.5, -32.5, -24.5, -17.5, -11,  -5,
                                   0.5,   6.5, 12.5,  19,    26.5,  34.5,  44.5, 56.5};
  std::vector<float> want(half);
  want.insert(want.end(), half.rbegin(), half.rend());
  EXPECT_EQ(row_of(TensorType::IQ4_NL, b), want);
}

TEST(DequantizeExtra, Q2_K) {
  // d 1, dmin 0.5; scale byte v = v | (15 - v) << 4 (scale v, min 15 - v); every qs byte 0xE4
  // holds fields 0, 1, 2, 3 at shifts 0, 2, 4, 6, so element 128n + 32j + l has level j and
  // sub-block v = 8n + 2j + l / 16: value v * j - 0.5 * (15 - v).
  std::vector<uint8_t> b(84, 0xE4);
  for (int v = 0; v < 16; ++v) b[size_t(v)] = uint8_t(v | (15 - v) << 4);
  put16(b, 80, kOne);
  put16(b, 82, kHalf);
  expect_elements(row_of(TensorType::Q2_K, b),
                  {{0, -7.5f},     // v 0, level 0: 0 - 7.5
                   {17, -7.0f},    // v 1, level 0: 0 - 7
                   {40, -4.5f},    // v 2, level 1: 2 - 6.5
                   {95, 5.0f},     // v 5, level 2: 10 - 5
                   {127, 17.0f},   // v 7, level 3: 21 - 4
                   {128, -3.5f},   // v 8, level 0: 0 - 3.5
                   {200, 22.5f},   // v 12, level 2: 24 - 1.5
                   {255, 45.0f}},  // v 15, level 3: 45 - 0
                  "q2_K");
}

TEST(DequantizeExtra, Q3_K) {
  // d 0.5; 6-bit scales 24 + i (effective 0.5 * (i - 8)): bytes 0..7 hold low nibbles of
  // scales k and k + 8 ((8 + k) | k << 4), bytes 8..11 the top bits (1, 1, 2, 2 at shifts
  // 0, 2, 4, 6 = 0xA5). hmask[l] = 0x0F for l < 16, 0xF0 above: block j's high bit is set
  // where (l < 16) == (j < 4). Every qs byte 0xE4: block j's 2-bit field is j % 4.
  // Element 32j + l: (j % 4 - (high bit ? 0 : 4)) * 0.5 * (2j + l / 16 - 8).
  std::vector<uint8_t> b(110);
  for (int l = 0; l < 32; ++l) b[size_t(l)] = l < 16 ? 0x0F : 0xF0;
  for (int k = 0; k < 64; ++k) b[size_t(32 + k)] = 0xE4;
  for (int k = 0; k < 8; ++k) b[size_t(96 + k)] = uint8_t((8 + k) | k << 4);
  for (int k = 0; k < 4; ++k) b[size_t(104 + k)] = 0xA5;
  put16(b, 108, kHalf);
  expect_elements(row_of(TensorType::Q3_K, b),
                  {{20, 14.0f},    // j 0, scale 1: level 0 - 4 = -4, times -3.5
                   {40, -3.0f},    // j 1, scale 2: level 1, times -3
                   {60, 7.5f},     // j 1, scale 3: level 1 - 4 = -3, times -2.5
                   {100, -3.0f},   // j 3, scale 6: level 3, times -1
                   {170, -3.0f},   // j 5, scale 10: level 1 - 4 = -3, times 1
                   {200, -4.0f},   // j 6, scale 12: level 2 - 4 = -2, times 2
                   {230, -3.0f},   // j 7, scale 14: level 3 - 4 = -1, times 3
                   {250, 10.5f}},  // j 7, scale 15: level 3, times 3.5
                  "q3_K");
}

TEST(DequantizeExtra, Q5_K) {
  // d 0.5, dmin 1; sub-block scales 1..7 and 40 (block 7: low nibble 8 in byte 11, top bits
  // 2 in byte 3), mins 2j. Every qs byte 0x5A (low nibble 10 for even j, high 5 for odd) and
  // every qh byte 0xAA (fifth bit set for odd j): levels 10 (even j) and 21 (odd j).
  // Element 32j + l: 0.5 * sc_j * level - m_j.
  std::vector<uint8_t> b(176, 0x5A);
  put16(b, 0, kHalf);
  put16(b, 2, kOne);
  const uint8_t scales[12] = {1, 2, 3,          4 | 2 << 6,  0,           2,
                              4, 6, 5 | 8 << 4, 6 | 10 << 4, 7 | 12 << 4, 8 | 14 << 4};
  std::memcpy(&b[4], scales, 12);
  for (int l = 0; l < 32; ++l) b[size_t(16 + l)] = 0xAA;
  expect_elements(row_of(TensorType::Q5_K, b),
                  {{0, 5.0f},       // j 0: 0.5 * 1 * 10 - 0
                   {40, 19.0f},     // j 1: 0.5 * 2 * 21 - 2
                   {100, 36.0f},    // j 3: 0.5 * 4 * 21 - 6
                   {130, 17.0f},    // j 4: 0.5 * 5 * 10 - 8
                   {255, 406.0f}},  // j 7: 0.5 * 40 * 21 - 14
                  "q5_K");
}

TEST(DequantizeExtra, IQ4_XS) {
  // d 0.25; block scales 29 + j (effective 0.25 * (j - 3)): low nibbles 13 14 15 0 1 2 3 4
  // paired in scales_l, top bits 1 1 1 2 2 2 2 2 in scales_h = 0xAA95. Block j's 16 bytes:
  // byte i = i | (15 - i) << 4, so element 32j + i reads table[i], 32j + 16 + i table[15 - i].
  std::vector<uint8_t> b(136);
  put16(b, 0, kQuarter);
  put16(b, 2, 0xAA95);
  b[4] = 0xED, b[5] = 0x0F, b[6] = 0x21, b[7] = 0x43;
  for (int j = 0; j < 8; ++j) {
    for (int i = 0; i < 16; ++i) b[size_t(8 + 16 * j + i)] = uint8_t(i | (15 - i) << 4);
  }
  expect_elements(row_of(TensorType::IQ4_XS, b),
                  {{0, 95.25f},      // j 0: -0.75 * -127
                   {17, -66.75f},    // j 0, table[14] = 89: -0.75 * 89
                   {100, 0.0f},      // j 3: scale 0
                   {165, -17.5f},    // j 5, table[5] = -35: 0.5 * -35
                   {255, -127.0f}},  // j 7, table[0] = -127: 1 * -127
                  "iq4_xs");
}

}  // namespace
}  // namespace baton::kernels
