#pragma once
// Block KV storage. A block holds block_size consecutive positions of one sequence for every
// layer, laid out [layer][k|v][kv_head][token][head_dim], so one head's keys within a block are
// contiguous for the attention walk.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace baton::model {

enum class KvType { F16, F32 };

class KvCache {
 public:
  KvCache(KvType type, int32_t block_size, int32_t n_layer, int32_t n_head_kv, int32_t head_dim);

  void allocate(int32_t n_blocks);  // drops previous contents
  void grow(int32_t n_blocks);      // keeps every block's contents (blocks are block-major)
  int32_t n_blocks() const { return n_blocks_; }
  int32_t block_size() const { return block_size_; }
  KvType type() const { return type_; }
  int32_t n_layers() const { return n_layer_; }
  uint64_t bytes_per_block() const { return block_elems_ * elem_bytes(); }
  uint64_t bytes_total() const { return storage_.size(); }

  // Stores one token's K and V (kv_dim floats each) at slot `slot` of `block` for `layer`.
  void write(int32_t block, int32_t slot, int32_t layer, const float* k, const float* v);
  // Reads head_dim-float rows of slots [0, n) of one head into out (n × head_dim floats).
  void read(int32_t block, int32_t layer, int32_t kv, int32_t head, int32_t n, float* out) const;
  // Slot 0 of one head's rows in storage form (uint16_t halves for F16, floats for F32), so the
  // SIMD attention paths can convert a block with wide loads instead of going through read().
  const void* rows(int32_t block, int32_t layer, int32_t kv, int32_t head) const {
    return storage_.data() + offset(block, layer, kv, head) * elem_bytes();
  }
  // Every byte of one block (all layers, K and V): the disk tier saves and restores blocks whole.
  uint8_t* block_data(int32_t block) {
    return storage_.data() + offset(block, 0, 0, 0) * elem_bytes();
  }
  // Slot `slot` of one head's rows in storage form, and the bytes of one such row.
  uint8_t* slot_data(int32_t block, int32_t layer, int32_t kv, int32_t head, int32_t slot) {
    return storage_.data() +
           (offset(block, layer, kv, head) + static_cast<uint64_t>(slot) * head_dim_) *
               elem_bytes();
  }
  size_t row_bytes() const { return static_cast<size_t>(head_dim_) * elem_bytes(); }
  // Copies the first n_tokens slots of every layer/head from block src to block dst.
  void copy_block(int32_t src, int32_t dst, int32_t n_tokens);

 private:
  size_t elem_bytes() const { return type_ == KvType::F16 ? 2 : 4; }
  // Element offset of (block, layer, k|v, head, slot 0).
  uint64_t offset(int32_t block, int32_t layer, int32_t kv, int32_t head) const;

  KvType type_;
  int32_t block_size_, n_layer_, n_head_kv_, head_dim_;
  uint64_t block_elems_;
  int32_t n_blocks_ = 0;
  std::vector<uint8_t> storage_;
};

}  // namespace baton::model
