#pragma once
// Block KV storage. A block holds block_size consecutive positions of one sequence for every
// layer, laid out [layer][k|v][kv_head][token][head_dim], so one head's keys within a block are
// contiguous for the attention walk. Keys and values each have their own storage type: f32,
// f16 (the default) or llama.cpp's q8_0 / q4_0 blocks of 32 along head_dim (--cache-type-k/-v),
// so a quantized row is head_dim / 32 blocks and a block's rows of one head stay contiguous.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace baton::model {

enum class KvType { F16, F32, Q8_0, Q4_0 };

// "f16", "f32", "q8_0", "q4_0": llama.cpp's names for -ctk / -ctv.
const char* kv_type_name(KvType t);
std::optional<KvType> kv_type_from_name(const std::string& name);
// The names kv_type_from_name accepts, for error messages ("f16, f32, q8_0, q4_0").
std::string kv_type_names();
bool kv_type_is_quantized(KvType t);
// Bytes of one head_dim row; quantized types need head_dim to be a multiple of 32 (0 otherwise).
size_t kv_row_bytes(KvType t, int32_t head_dim);

class KvCache {
 public:
  // Throws std::runtime_error when a quantized type cannot hold head_dim (not a multiple of 32).
  KvCache(KvType k_type, KvType v_type, int32_t block_size, int32_t n_layer, int32_t n_head_kv,
          int32_t head_dim);
  KvCache(KvType type, int32_t block_size, int32_t n_layer, int32_t n_head_kv, int32_t head_dim)
      : KvCache(type, type, block_size, n_layer, n_head_kv, head_dim) {}

  void allocate(int32_t n_blocks);  // drops previous contents
  void grow(int32_t n_blocks);      // keeps every block's contents (blocks are block-major)
  int32_t n_blocks() const { return n_blocks_; }
  int32_t block_size() const { return block_size_; }
  KvType type(int32_t kv) const { return kv == 0 ? k_type_ : v_type_; }
  KvType k_type() const { return k_type_; }
  KvType v_type() const { return v_type_; }
  int32_t n_layers() const { return n_layer_; }
  int32_t head_dim() const { return head_dim_; }
  uint64_t bytes_per_block() const { return block_bytes_; }
  uint64_t bytes_total() const { return storage_.size(); }

  // Stores one token's K and V (kv_dim floats each) at slot `slot` of `block` for `layer`,
  // converted (rounded, quantized) to the storage types.
  void write(int32_t block, int32_t slot, int32_t layer, const float* k, const float* v);
  // Reads head_dim-float rows of slots [0, n) of one head into out (n × head_dim floats).
  void read(int32_t block, int32_t layer, int32_t kv, int32_t head, int32_t n, float* out) const;
  // Slot 0 of one head's rows in storage form (uint16_t halves for F16, floats for F32, q8_0 or
  // q4_0 blocks), so the SIMD attention paths can convert a block with wide loads instead of
  // going through read().
  const void* rows(int32_t block, int32_t layer, int32_t kv, int32_t head) const {
    return storage_.data() + offset(block, layer, kv, head);
  }
  // Every byte of one block (all layers, K and V): the disk tier saves and restores blocks whole.
  uint8_t* block_data(int32_t block) { return storage_.data() + offset(block, 0, 0, 0); }
  // Slot `slot` of one head's rows in storage form, and the bytes of one such row.
  uint8_t* slot_data(int32_t block, int32_t layer, int32_t kv, int32_t head, int32_t slot) {
    return storage_.data() + offset(block, layer, kv, head) +
           static_cast<uint64_t>(slot) * row_bytes(kv);
  }
  size_t row_bytes(int32_t kv) const { return kv == 0 ? k_row_ : v_row_; }
  // Copies the first n_tokens slots of every layer/head from block src to block dst.
  void copy_block(int32_t src, int32_t dst, int32_t n_tokens);

 private:
  // Byte offset of (block, layer, k|v, head, slot 0).
  uint64_t offset(int32_t block, int32_t layer, int32_t kv, int32_t head) const {
    return static_cast<uint64_t>(block) * block_bytes_ +
           static_cast<uint64_t>(layer) * layer_bytes_ +
           (kv == 0 ? 0 : static_cast<uint64_t>(n_head_kv_) * block_size_ * k_row_) +
           static_cast<uint64_t>(head) * block_size_ * row_bytes(kv);
  }

  KvType k_type_, v_type_;
  int32_t block_size_, n_layer_, n_head_kv_, head_dim_;
  size_t k_row_, v_row_;
  uint64_t layer_bytes_, block_bytes_;
  int32_t n_blocks_ = 0;
  std::vector<uint8_t> storage_;
};

}  // namespace baton::model
