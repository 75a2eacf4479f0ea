#include "model/kv_cache.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels/fp16.h"

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

}  // namespace

KvCache::KvCache(KvType type, int32_t block_size, int32_t n_layer, int32_t n_head_kv,
                 int32_t head_dim)
    : type_(type),
      block_size_(block_size),
      n_layer_(n_layer),
      n_head_kv_(n_head_kv),
      head_dim_(head_dim),
      block_elems_(static_cast<uint64_t>(n_layer) * 2 * n_head_kv * block_size * head_dim) {
  if (block_size <= 0 || block_size > 4096) {
    throw std::runtime_error("kv block_size " + std::to_string(block_size) +
                             " is out of range (expected 1..4096)");
  }
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

uint64_t KvCache::offset(int32_t block, int32_t layer, int32_t kv, int32_t head) const {
  return static_cast<uint64_t>(block) * block_elems_ +
         ((static_cast<uint64_t>(layer) * 2 + kv) * n_head_kv_ + head) * block_size_ * head_dim_;
}

void KvCache::write(int32_t block, int32_t slot, int32_t layer, const float* k, const float* v) {
  for (int32_t kv = 0; kv < 2; ++kv) {
    const float* src = kv == 0 ? k : v;
    for (int32_t h = 0; h < n_head_kv_; ++h) {
      const uint64_t off = offset(block, layer, kv, h) + static_cast<uint64_t>(slot) * head_dim_;
      const float* s = src + static_cast<int64_t>(h) * head_dim_;
      if (type_ == KvType::F32) {
        std::memcpy(storage_.data() + off * 4, s, head_dim_ * sizeof(float));
      } else {
        auto* d = reinterpret_cast<uint16_t*>(storage_.data()) + off;
        for (int32_t i = 0; i < head_dim_; ++i) d[i] = kernels::fp32_to_fp16(s[i]);
      }
    }
  }
}

void KvCache::read(int32_t block, int32_t layer, int32_t kv, int32_t head, int32_t n,
                   float* out) const {
  const uint64_t off = offset(block, layer, kv, head);
  const size_t count = static_cast<size_t>(n) * head_dim_;
  if (type_ == KvType::F32) {
    std::memcpy(out, storage_.data() + off * 4, count * sizeof(float));
  } else {
    const auto* s = reinterpret_cast<const uint16_t*>(storage_.data()) + off;
    const float* table = half_table();
    for (size_t i = 0; i < count; ++i) out[i] = table[s[i]];
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
  const size_t bytes = static_cast<size_t>(n_tokens) * head_dim_ * elem_bytes();
  for (int32_t l = 0; l < n_layer_; ++l) {
    for (int32_t kv = 0; kv < 2; ++kv) {
      for (int32_t h = 0; h < n_head_kv_; ++h) {
        std::memmove(storage_.data() + offset(dst, l, kv, h) * elem_bytes(),
                     storage_.data() + offset(src, l, kv, h) * elem_bytes(), bytes);
      }
    }
  }
}

}  // namespace baton::model
