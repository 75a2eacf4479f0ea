#pragma once
// The KV of a model's sliding-window layers, kept per sequence for the positions its window can
// still see instead of in the shared block cache. A windowed layer's token at position p reads
// positions p - window + 1 .. p only, so each running sequence holds the blocks covering its last
// `window` positions plus the step being computed (window + one chunk in all), recycled as the
// sequence moves on; the full-attention layers keep every position in the block cache.
//
// What this costs is prefix reuse by blocks alone: a cached prefix's blocks hold no windowed-layer
// KV, so a sequence can start after a prefix only from a checkpoint of that KV (its last `window`
// positions, taken at a block end as a hybrid model's recurrent state is), the mechanism
// kv::StateStore names and evicts. The ring's blocks use the block cache's layout and block size,
// so attention walks them exactly as it walks the cache: same bits whichever holds the keys.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/kv_cache.h"

namespace baton::model {

class WindowKv {
 public:
  WindowKv(KvType k_type, KvType v_type, int32_t block_size, int32_t n_layers, int32_t n_head_kv,
           int32_t head_dim, int32_t window);
  WindowKv(KvType type, int32_t block_size, int32_t n_layers, int32_t n_head_kv, int32_t head_dim,
           int32_t window)
      : WindowKv(type, type, block_size, n_layers, n_head_kv, head_dim, window) {}

  int32_t window() const { return window_; }
  // The storage attention reads (layer = the windowed layer's index among windowed layers).
  KvCache& cache() { return cache_; }
  const KvCache& cache() const { return cache_; }
  // Blocks the rings hold now (all sequences) and have ever held at once.
  int32_t blocks_in_use() const { return cache_.n_blocks() - static_cast<int32_t>(free_.size()); }
  int32_t blocks_allocated() const { return cache_.n_blocks(); }
  uint64_t bytes_allocated() const { return cache_.bytes_total(); }

  // Empty when sequence `seq` may run a step from start_pos, else why not (one line): position 0
  // starts it afresh; a later position needs the ring to still hold the window before it.
  std::string check(uint64_t seq, int32_t start_pos) const;
  // Maps the blocks of positions [start_pos - window, end_pos) of `seq` to ring blocks (blocks
  // before that are recycled) and returns its table, indexed by the block cache's block number
  // (entries before the window are -1, never read). check() must have passed. Until commit(), a
  // sequence is mid-step: a step that throws leaves it unusable rather than wrong.
  const int32_t* begin(uint64_t seq, int32_t start_pos, int32_t end_pos);
  void commit(uint64_t seq, int32_t end_pos);
  void release(uint64_t seq);
  void clear();

  // Checkpoints: the last `window` positions of every windowed layer before position n_pos, in
  // slots of checkpoint_bytes() in the model's storage (slot s at base + s * stride).
  uint64_t checkpoint_bytes() const { return slot_bytes_; }
  void attach_slots(uint8_t* base, uint64_t stride, int32_t n);
  int32_t n_slots() const { return static_cast<int32_t>(slot_pos_.size()); }
  void begin_slot(int32_t s) { slot_pos_[s] = -1; }
  // The slot's bytes were written from elsewhere (the disk tier): it holds the window before
  // n_pos (<= 0: nothing usable).
  void set_slot(int32_t s, int32_t n_pos) { slot_pos_[s] = n_pos > 0 ? n_pos : -1; }
  // Copies `seq`'s window before position n_pos into slot s (after the step that computed it).
  void capture(uint64_t seq, int32_t n_pos, int32_t s);
  // Sequence `seq` continues from slot s, which must hold the window before n_pos: "" when it
  // did, else why not (one line) and nothing changed.
  std::string restore(uint64_t seq, int32_t s, int32_t n_pos);

 private:
  struct Seq {
    int32_t n_pos = -1;          // positions computed; -1 mid-step
    std::vector<int32_t> table;  // block number -> ring block, -1 when not held
  };
  int32_t take_block();
  void drop_blocks_before(Seq& s, int32_t first_kept);
  // Copies the window before n_pos between a sequence's ring and slot s, either way.
  void copy_window(Seq& s, int32_t n_pos, int32_t slot, bool to_slot);

  KvCache cache_;
  int32_t window_;
  int32_t n_layers_, n_head_kv_, head_dim_;
  std::unordered_map<uint64_t, Seq> seqs_;
  std::vector<int32_t> free_;  // ring blocks no sequence holds
  uint64_t slot_bytes_ = 0;
  uint8_t* slots_ = nullptr;
  uint64_t stride_ = 0;
  std::vector<int32_t> slot_pos_;  // positions each slot's window ends at; -1: nothing usable
};

}  // namespace baton::model
