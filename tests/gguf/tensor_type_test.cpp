// Block geometry and names of the tensor types.
#include "gguf/tensor_type.h"

#include <gtest/gtest.h>

namespace baton::gguf {
namespace {

TEST(TensorType, TraitsMatchGgml) {
  struct Want {
    TensorType t;
    uint32_t elems, bytes;
    bool supported;
  };
  for (const Want& w : std::initializer_list<Want>{{TensorType::F32, 1, 4, true},
                                                   {TensorType::F16, 1, 2, true},
                                                   {TensorType::BF16, 1, 2, true},
                                                   {TensorType::Q4_0, 32, 18, true},
                                                   {TensorType::Q4_1, 32, 20, true},
                                                   {TensorType::Q5_0, 32, 22, true},
                                                   {TensorType::Q5_1, 32, 24, false},
                                                   {TensorType::Q8_0, 32, 34, true},
                                                   {TensorType::Q8_1, 32, 36, false},
                                                   {TensorType::Q2_K, 256, 84, true},
                                                   {TensorType::Q3_K, 256, 110, true},
                                                   {TensorType::Q4_K, 256, 144, true},
                                                   {TensorType::Q5_K, 256, 176, true},
                                                   {TensorType::Q6_K, 256, 210, true},
                                                   {TensorType::Q8_K, 256, 292, false},
                                                   {TensorType::IQ4_NL, 32, 18, true},
                                                   {TensorType::IQ4_XS, 256, 136, true},
                                                   {TensorType::MXFP4, 32, 17, true}}) {
    auto tr = traits(w.t);
    EXPECT_EQ(tr.block_elems, w.elems) << tr.name;
    EXPECT_EQ(tr.block_bytes, w.bytes) << tr.name;
    EXPECT_EQ(tr.supported, w.supported) << tr.name;
    EXPECT_EQ(parse_type(tr.name), w.t) << tr.name;
  }
  EXPECT_FALSE(type_traits(4).has_value());  // Q4_2, removed from GGML
  EXPECT_FALSE(type_traits(1000).has_value());
}

TEST(TensorType, NamesAndRowBytes) {
  EXPECT_EQ(type_name(TensorType::Q4_K), "q4_K");
  EXPECT_EQ(parse_type("Q4_K"), TensorType::Q4_K);
  EXPECT_EQ(parse_type("q8_0"), TensorType::Q8_0);
  EXPECT_EQ(parse_type("F16"), TensorType::F16);
  EXPECT_FALSE(parse_type("q9_0").has_value());
  EXPECT_EQ(row_bytes(TensorType::Q8_0, 4096), 128u * 34u);
  EXPECT_EQ(row_bytes(TensorType::Q6_K, 512), 2u * 210u);
  EXPECT_EQ(row_bytes(TensorType::F32, 3), 12u);
  EXPECT_EQ(type_name(TensorType::MXFP4), "mxfp4");
  EXPECT_EQ(parse_type("MXFP4"), TensorType::MXFP4);
  EXPECT_EQ(row_bytes(TensorType::MXFP4, 2880), 90u * 17u);  // gpt-oss's width
}

}  // namespace
}  // namespace baton::gguf
