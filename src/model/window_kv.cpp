#include "model/window_kv.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace baton::model {

WindowKv::WindowKv(KvType k_type, KvType v_type, int32_t block_size, int32_t n_layers,
                   int32_t n_head_kv, int32_t head_dim, int32_t window)
    : cache_(k_type, v_type, block_size, n_layers, n_head_kv, head_dim),
      window_(window),
      n_layers_(n_layers),
      n_head_kv_(n_head_kv),
      head_dim_(head_dim),
      slot_bytes_(static_cast<uint64_t>(window) * n_layers * n_head_kv *
                  (cache_.row_bytes(0) + cache_.row_bytes(1))) {
  if (window <= 0) throw std::runtime_error("WindowKv: the window must be positive");
}

std::string WindowKv::check(uint64_t seq, int32_t start_pos) const {
  if (start_pos == 0) return "";
  const auto it = seqs_.find(seq);
  if (it == seqs_.end()) {
    return fmt::format(
        "sequence {} continues at position {} but holds no sliding-window KV (a windowed "
        "model's sequence starts at position 0, or from a checkpoint of its window)",
        seq, start_pos);
  }
  const Seq& s = it->second;
  if (s.n_pos < start_pos) {
    return fmt::format("sequence {} continues at position {} but its window KV holds {} positions",
                       seq, start_pos, s.n_pos < 0 ? "no usable" : std::to_string(s.n_pos));
  }
  const int32_t bs = cache_.block_size();
  for (int32_t b = std::max(0, start_pos - window_) / bs; b <= (start_pos - 1) / bs; ++b) {
    if (b >= static_cast<int32_t>(s.table.size()) || s.table[b] < 0) {
      return fmt::format(
          "sequence {} continues at position {} but its window KV no longer holds positions "
          "{}..{} (a sequence can step back only within its last step)",
          seq, start_pos, b * bs, b * bs + bs - 1);
    }
  }
  return "";
}

int32_t WindowKv::take_block() {
  if (free_.empty()) {
    const int32_t n = cache_.n_blocks();
    // Grows by half again (at least 4 blocks) so a context that keeps growing copies the rings a
    // bounded number of times.
    const int32_t grown = n + std::max(4, n / 2);
    try {
      cache_.grow(grown);
    } catch (const std::bad_alloc&) {
      throw std::runtime_error(fmt::format(
          "cannot grow the sliding-window KV to {} blocks ({:.1f} MB): lower --parallel or the "
          "prefill chunk",
          grown, double(grown) * double(cache_.bytes_per_block()) / 1048576.0));
    }
    for (int32_t b = grown - 1; b >= n; --b) free_.push_back(b);
  }
  const int32_t b = free_.back();
  free_.pop_back();
  return b;
}

void WindowKv::drop_blocks_before(Seq& s, int32_t first_kept) {
  const int32_t end = std::min(first_kept, static_cast<int32_t>(s.table.size()));
  for (int32_t b = 0; b < end; ++b) {
    if (s.table[b] >= 0) free_.push_back(s.table[b]);
    s.table[b] = -1;
  }
}

const int32_t* WindowKv::begin(uint64_t seq, int32_t start_pos, int32_t end_pos) {
  Seq& s = seqs_[seq];
  const int32_t bs = cache_.block_size();
  if (start_pos == 0) drop_blocks_before(s, static_cast<int32_t>(s.table.size()));
  s.n_pos = -1;
  drop_blocks_before(s, std::max(0, start_pos - window_) / bs);
  const int32_t last = (end_pos - 1) / bs;
  if (static_cast<int32_t>(s.table.size()) <= last) s.table.resize(last + 1, -1);
  for (int32_t b = std::max(0, start_pos - window_) / bs; b <= last; ++b) {
    if (s.table[b] < 0) s.table[b] = take_block();
  }
  return s.table.data();
}

void WindowKv::commit(uint64_t seq, int32_t end_pos) {
  seqs_.at(seq).n_pos = end_pos;
}

void WindowKv::release(uint64_t seq) {
  const auto it = seqs_.find(seq);
  if (it == seqs_.end()) return;
  drop_blocks_before(it->second, static_cast<int32_t>(it->second.table.size()));
  seqs_.erase(it);
}

void WindowKv::clear() {
  for (auto& [id, s] : seqs_) drop_blocks_before(s, static_cast<int32_t>(s.table.size()));
  seqs_.clear();
}

void WindowKv::attach_slots(uint8_t* base, uint64_t stride, int32_t n) {
  slots_ = base;
  stride_ = stride;
  slot_pos_.assign(static_cast<size_t>(std::max(0, n)), -1);
}

void WindowKv::copy_window(Seq& s, int32_t n_pos, int32_t slot, bool to_slot) {
  const int32_t bs = cache_.block_size();
  const int32_t first = n_pos - window_;  // the slot's row 0 (may be before position 0)
  uint8_t* base = slots_ + static_cast<uint64_t>(slot) * stride_;
  // Each block's run of positions is contiguous in both layouts, per (layer, k|v, head); a slot
  // holds per layer the window's K rows of every head, then its V rows.
  const uint64_t k_rows = static_cast<uint64_t>(n_head_kv_) * window_ * cache_.row_bytes(0);
  const uint64_t layer_rows =
      k_rows + static_cast<uint64_t>(n_head_kv_) * window_ * cache_.row_bytes(1);
  for (int32_t p = std::max(0, first); p < n_pos;) {
    const int32_t b = p / bs, in_block = p % bs;
    const int32_t run = std::min(bs - in_block, n_pos - p);
    for (int32_t l = 0; l < n_layers_; ++l) {
      for (int32_t kv = 0; kv < 2; ++kv) {
        const size_t row = cache_.row_bytes(kv);
        for (int32_t h = 0; h < n_head_kv_; ++h) {
          uint8_t* ring = cache_.slot_data(s.table[b], l, kv, h, in_block);
          uint8_t* saved = base + l * layer_rows + (kv == 0 ? 0 : k_rows) +
                           static_cast<uint64_t>(h) * window_ * row +
                           static_cast<uint64_t>(p - first) * row;
          if (to_slot) {
            std::memcpy(saved, ring, run * row);
          } else {
            std::memcpy(ring, saved, run * row);
          }
        }
      }
    }
    p += run;
  }
}

void WindowKv::capture(uint64_t seq, int32_t n_pos, int32_t s) {
  copy_window(seqs_.at(seq), n_pos, s, true);
  slot_pos_[s] = n_pos;
}

std::string WindowKv::restore(uint64_t seq, int32_t s, int32_t n_pos) {
  if (s < 0 || s >= n_slots()) {
    return fmt::format("window checkpoint slot {} is out of range ({} slots)", s, n_slots());
  }
  if (n_pos <= 0 || slot_pos_[s] != n_pos) {
    return fmt::format("window checkpoint slot {} holds {} positions, not {}", s,
                       slot_pos_[s] < 0 ? "no usable" : std::to_string(slot_pos_[s]), n_pos);
  }
  release(seq);
  const int32_t* table = begin(seq, n_pos, n_pos);  // maps the blocks before n_pos
  (void)table;
  Seq& q = seqs_.at(seq);
  copy_window(q, n_pos, s, false);
  q.n_pos = n_pos;
  return "";
}

}  // namespace baton::model
