#pragma once
// Tensor element types as GGUF numbers them, with their block geometry. Every module that
// touches tensor bytes (reader validation, kernels, writer, synth) takes sizes from here.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace baton::gguf {

enum class TensorType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ4_NL = 20,
  IQ4_XS = 23,
  BF16 = 30,
  MXFP4 = 39,
};

struct TypeTraits {
  std::string_view name;  // as llama.cpp prints it: "f32", "q8_0", "q4_K" ...
  uint32_t block_elems;   // elements per block (1 for float types)
  uint32_t block_bytes;   // bytes per block
  bool supported;         // baton has kernels for it
};

// Traits of a type id read from a file; nullopt for ids GGUF does not define.
std::optional<TypeTraits> type_traits(uint32_t raw_type);
TypeTraits traits(TensorType t);
std::string_view type_name(TensorType t);
// Parses "f32", "F16", "q8_0", "q4_k", ... (case-insensitive).
std::optional<TensorType> parse_type(std::string_view name);
// Bytes of a row of n elements; n must be a multiple of the block size.
size_t row_bytes(TensorType t, uint64_t n);

}  // namespace baton::gguf
