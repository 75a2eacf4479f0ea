// The AVX2 kernel decodes every quantized type in place, block by block: its levels must be
// unpack_row's (the scalar reference of the matmul form) bit for bit, or the AVX2 level would
// compute with other weights than the other levels.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernels/matmul_impl.h"
#include "kernels/quantize.h"
#include "kernels/raw_blocks.h"
#include "kernels/simd.h"

namespace baton::kernels {
namespace {

using gguf::TensorType;

TEST(Avx2Levels, EveryTypeDecodesInPlaceAsUnpackRowDoes) {
  if (detected_simd_level() < SimdLevel::Avx2) GTEST_SKIP() << "this CPU has no AVX2";
  const TensorType types[] = {TensorType::Q4_0,   TensorType::Q4_1, TensorType::Q5_0,
                              TensorType::IQ4_NL, TensorType::Q2_K, TensorType::Q3_K,
                              TensorType::Q4_K,   TensorType::Q5_K, TensorType::Q6_K,
                              TensorType::IQ4_XS, TensorType::MXFP4};
  const int64_t cols = 1024;
  for (auto t : types) {
    for (bool extreme : {false, true}) {
      const int64_t rows = 6;
      const int64_t row_bytes = int64_t(kernel_row_bytes(t, cols));
      const auto bytes = testing::random_blocks(t, rows * cols / block_shape(t).elems,
                                                uint32_t(int(t) * 2 + extreme), extreme);
      UnpackedRow u;
      for (int64_t o = 0; o < rows; ++o) {
        const uint8_t* row = bytes.data() + o * row_bytes;
        unpack_row(t, row, cols, u);
        for (int64_t b = 0; b < cols / kQK; ++b) {
          int8_t got[kQK];
          avx2_block_levels(t, row, b, got);
          for (int i = 0; i < kQK; ++i) {
            ASSERT_EQ(int(got[i]), int(u.q[size_t(b * kQK + i)]))
                << gguf::type_name(t) << (extreme ? " extreme" : " random") << " row " << o
                << " block " << b << " element " << i;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace baton::kernels
