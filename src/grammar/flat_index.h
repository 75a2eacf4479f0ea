#pragma once
// A hash map from 64-bit keys to 32-bit values in one flat array (open addressing, linear
// probing), for the matcher's closure: a step of an ambiguous grammar inserts millions of keys,
// where a node-based table pays an allocation and a cache miss for each. Clearing is O(1): a
// slot is live only when it carries the current stamp.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace baton::grammar {

class FlatIndex {
 public:
  FlatIndex() { reset(kInitial); }

  // The value under key, after storing `value` there when it was absent (second: it was).
  std::pair<uint32_t, bool> insert(uint64_t key, uint32_t value) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    size_t i = slot_of(key);
    for (;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.stamp != stamp_) {
        s = Slot{key, value, stamp_};
        ++size_;
        return {value, true};
      }
      if (s.key == key) return {s.value, false};
    }
  }

  // Empties the table; one that a large step grew goes back to its first size.
  void clear() {
    if (slots_.size() > kKeep) {
      reset(kInitial);
    } else if (size_ > 0) {
      size_ = 0;
      if (++stamp_ == 0) reset(slots_.size());  // the stamp wrapped: old slots could revive
    }
  }

  size_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t key = 0;
    uint32_t value = 0;
    uint32_t stamp = 0;  // live when equal to stamp_
  };
  static constexpr size_t kInitial = 64;
  static constexpr size_t kKeep = size_t{1} << 14;

  size_t slot_of(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & mask_;
  }

  void reset(size_t n) {
    slots_.assign(n, Slot{});
    mask_ = n - 1;
    stamp_ = 1;
    size_ = 0;
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    const uint32_t live = stamp_;
    reset(old.size() * 2);
    for (const Slot& s : old) {
      if (s.stamp == live) insert(s.key, s.value);
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
  uint32_t stamp_ = 1;
};

}  // namespace baton::grammar
