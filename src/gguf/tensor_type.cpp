#include "gguf/tensor_type.h"

#include <array>

#include "util/ascii.h"

namespace baton::gguf {
namespace {

struct Row {
  uint32_t id;
  TypeTraits traits;
};

// Block geometry as GGUF defines it; `supported` marks the types baton has kernels for.
constexpr std::array<Row, 18> kTypes = {{
    {0, {"f32", 1, 4, true}},
    {1, {"f16", 1, 2, true}},
    {2, {"q4_0", 32, 18, true}},
    {3, {"q4_1", 32, 20, true}},
    {6, {"q5_0", 32, 22, true}},
    {7, {"q5_1", 32, 24, false}},
    {8, {"q8_0", 32, 34, true}},
    {9, {"q8_1", 32, 36, false}},
    {10, {"q2_K", 256, 84, true}},
    {11, {"q3_K", 256, 110, true}},
    {12, {"q4_K", 256, 144, true}},
    {13, {"q5_K", 256, 176, true}},
    {14, {"q6_K", 256, 210, true}},
    {15, {"q8_K", 256, 292, false}},
    {20, {"iq4_nl", 32, 18, true}},
    {23, {"iq4_xs", 256, 136, true}},
    {30, {"bf16", 1, 2, true}},
    {39, {"mxfp4", 32, 17, true}},
}};

}  // namespace

std::optional<TypeTraits> type_traits(uint32_t raw_type) {
  for (const auto& r : kTypes) {
    if (r.id == raw_type) return r.traits;
  }
  return std::nullopt;
}

TypeTraits traits(TensorType t) {
  auto tr = type_traits(static_cast<uint32_t>(t));
  // Every enumerator is in the table; the fallback only guards a cast from a bad integer.
  return tr ? *tr : TypeTraits{"unknown", 1, 0, false};
}

std::string_view type_name(TensorType t) {
  return traits(t).name;
}

std::optional<TensorType> parse_type(std::string_view name) {
  for (const auto& r : kTypes) {
    if (util::iequals(r.traits.name, name)) return static_cast<TensorType>(r.id);
  }
  return std::nullopt;
}

size_t row_bytes(TensorType t, uint64_t n) {
  auto tr = traits(t);
  return static_cast<size_t>(n / tr.block_elems * tr.block_bytes);
}

}  // namespace baton::gguf
