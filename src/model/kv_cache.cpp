#include "model/kv_cache.h"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/fp16.h"
#include "kernels/quantize.h"

namespace baton::model {
namespace {

// Attention converts every cached half it reads; a table lookup gives the same bits as
// kernels::fp16_to_fp32 at a fraction of the cost.
const float* half_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t i = 0; i < 65536; ++i) t[i] = kernels::fp16_to_fp32(static_cast<uint16_t>(i));
    return t;
  }();
  return table.data();
}

gguf::TensorType tensor_type_of(KvType t) {
  return t == KvType::Q8_0 ? gguf::TensorType::Q8_0 : gguf::TensorType::Q4_0;
}

struct KvTypeName {
  KvType type;
  const char* name;
};
constexpr KvTypeName kKvTypeNames[] = {
    {KvType::F16, "f16"}, {KvType::F32, "f32"}, {KvType::Q8_0, "q8_0"}, {KvType::Q4_0, "q4_0"}};

}  // namespace

const char* kv_type_name(KvType t) {
  for (const auto& n : kKvTypeNames) {
    if (n.type == t) return n.name;
  }
  return "?";
}

std::optional<KvType> kv_type_from_name(const std::string& name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  for (const auto& n : kKvTypeNames) {
    if (lower == n.name) return n.type;
  }
  return std::nullopt;
}

std::string kv_type_names() {
  std::string s;
  for (const auto& n : kKvTypeNames) s += (s.empty() ? "" : ", ") + std::string(n.name);
  return s;
}

bool kv_type_is_quantized(KvType t) {
  return t == KvType::Q8_0 || t == KvType::Q4_0;
}

size_t kv_row_bytes(KvType t, int32_t head_dim) {
  if (head_dim <= 0) return 0;
  switch (t) {
    case KvType::F32:
      return static_cast<size_t>(head_dim) * 4;
    case KvType::F16:
      return static_cast<size_t>(head_dim) * 2;
    default:
      if (head_dim % 32 != 0) return 0;
      return kernels::kernel_row_bytes(tensor_type_of(t), head_dim);
  }
}

KvCache::KvCache(KvType k_type, KvType v_type, int32_t block_size, int32_t n_layer,
                 int32_t n_head_kv, int32_t head_dim)
    : k_type_(k_type),
      v_type_(v_type),
      block_size_(block_size),
      n_layer_(n_layer),
      n_head_kv_(n_head_kv),
      head_dim_(head_dim),
      k_row_(kv_row_bytes(k_type, head_dim)),
      v_row_(kv_row_bytes(v_type, head_dim)) {
  if (block_size <= 0 || block_size > 4096) {
    throw std::runtime_error("kv block_size " + std::to_string(block_size) +
                             " is out of range (expected 1..4096)");
  }
  for (int32_t kv = 0; kv < 2; ++kv) {
    if (row_bytes(kv) == 0) {
      throw std::runtime_error(fmt::format(
          "--cache-type-{} {} stores blocks of 32 values along a head, but this model's head "
          "dim is {}: use f16 or f32",
          kv == 0 ? 'k' : 'v', kv_type_name(type(kv)), head_dim));
    }
  }
  layer_bytes_ = static_cast<uint64_t>(n_head_kv) * block_size * (k_row_ + v_row_);
  block_bytes_ = static_cast<uint64_t>(n_layer) * layer_bytes_;
}

void KvCache::allocate(int32_t n_blocks) {
  if (n_blocks < 0) throw std::runtime_error("allocate_kv: n_blocks must be >= 0");
  storage_.clear();
  storage_.shrink_to_fit();
  storage_.resize(static_cast<size_t>(n_blocks) * bytes_per_block());
  n_blocks_ = n_blocks;
}

void KvCache::grow(int32_t n_blocks) {
  if (n_blocks < n_blocks_) throw std::runtime_error("KvCache::grow: cannot shrink");
  storage_.resize(static_cast<size_t>(n_blocks) * bytes_per_block());
  n_blocks_ = n_blocks;
}

void KvCache::write(int32_t block, int32_t slot, int32_t layer, const float* k, const float* v) {
  for (int32_t kv = 0; kv < 2; ++kv) {
    const float* src = kv == 0 ? k : v;
    const KvType t = type(kv);
    for (int32_t h = 0; h < n_head_kv_; ++h) {
      uint8_t* d = slot_data(block, layer, kv, h, slot);
      const float* s = src + static_cast<int64_t>(h) * head_dim_;
      if (t == KvType::F32) {
        std::memcpy(d, s, head_dim_ * sizeof(float));
      } else if (t == KvType::F16) {
        auto* half = reinterpret_cast<uint16_t*>(d);
        for (int32_t i = 0; i < head_dim_; ++i) half[i] = kernels::fp32_to_fp16(s[i]);
      } else {
        kernels::quantize_row(tensor_type_of(t), s, d, head_dim_);
      }
    }
  }
}

void KvCache::read(int32_t block, int32_t layer, int32_t kv, int32_t head, int32_t n,
                   float* out) const {
  const uint8_t* src = storage_.data() + offset(block, layer, kv, head);
  const size_t count = static_cast<size_t>(n) * head_dim_;
  const KvType t = type(kv);
  if (t == KvType::F32) {
    std::memcpy(out, src, count * sizeof(float));
  } else if (t == KvType::F16) {
    const auto* s = reinterpret_cast<const uint16_t*>(src);
    const float* table = half_table();
    for (size_t i = 0; i < count; ++i) out[i] = table[s[i]];
  } else if (count > 0) {
    kernels::dequantize_row(tensor_type_of(t), src, out, static_cast<int64_t>(count));
  }
}

void KvCache::copy_block(int32_t src, int32_t dst, int32_t n_tokens) {
  if (src < 0 || src >= n_blocks_ || dst < 0 || dst >= n_blocks_) {
    throw std::runtime_error("copy_block: block id out of range (have " +
                             std::to_string(n_blocks_) + " blocks)");
  }
  if (n_tokens < 0 || n_tokens > block_size_) {
    throw std::runtime_error("copy_block: n_tokens must be 0.." + std::to_string(block_size_));
  }
  if (src == dst || n_tokens == 0) return;
  for (int32_t l = 0; l < n_layer_; ++l) {
    for (int32_t kv = 0; kv < 2; ++kv) {
      const size_t bytes = static_cast<size_t>(n_tokens) * row_bytes(kv);
      for (int32_t h = 0; h < n_head_kv_; ++h) {
        std::memmove(storage_.data() + offset(dst, l, kv, h),
                     storage_.data() + offset(src, l, kv, h), bytes);
      }
    }
  }
}

}  // namespace baton::model
