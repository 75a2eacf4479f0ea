#pragma once
// Bookkeeping of the recurrent-state checkpoints of a hybrid model: which checkpoint slot holds
// the state after which prefix. The bytes live in the engine (Engine::allocate_state_slots);
// this class only names slots. A checkpoint is named by the chain hash of the full block it
// ends (kv::BlockPool's names), so a request whose prefix match reaches that block can start
// its state there. Checkpoints are evicted least recently used, independently of the blocks:
// one whose blocks are gone is never found again and ages out. Only the engine-loop thread
// uses it.
#include <cstdint>
#include <list>
#include <optional>
#include <unordered_map>
#include <vector>

namespace baton::kv {

struct StateStoreStats {
  uint64_t taken = 0;     // checkpoints committed
  uint64_t restored = 0;  // found for a request that then started from it
  uint64_t evictions = 0;
};

class StateStore {
 public:
  explicit StateStore(int32_t n_slots);

  int32_t n_slots() const { return static_cast<int32_t>(slots_.size()); }
  int32_t n_held() const { return static_cast<int32_t>(by_hash_.size()); }  // named slots
  const StateStoreStats& stats() const { return stats_; }

  bool contains(uint64_t hash) const { return by_hash_.count(hash) > 0; }
  // A slot for a checkpoint a step is about to take: a free one, else the least recently used
  // checkpoint's (evicted). nullopt when every slot is reserved by the step being built.
  std::optional<int32_t> reserve();
  // The step that wrote `slot` succeeded: it holds the state after the n_pos positions of the
  // prefix named `hash`. A duplicate (another slot already holds that prefix) frees the slot.
  void commit(int32_t slot, uint64_t hash, int32_t n_pos);
  // The step failed: the slot holds nothing usable.
  void cancel(int32_t slot);
  // The slot holding the state for prefix `hash` of n_pos positions, or -1.
  int32_t find(uint64_t hash, int32_t n_pos) const;
  // A request starts from this slot's checkpoint: it becomes the most recently used.
  void restored(int32_t slot);
  // The checkpoint turned out unusable (the engine refused it): forget it.
  void drop(int32_t slot);

 private:
  struct Slot {
    enum class State { Free, Reserved, Held } state = State::Free;
    uint64_t hash = 0;
    int32_t n_pos = 0;
    std::list<int32_t>::iterator lru_pos;
  };
  void unname(int32_t slot);  // Held -> Free bookkeeping (LRU and name)

  std::vector<Slot> slots_;
  std::vector<int32_t> free_;  // popped from the back
  std::list<int32_t> lru_;     // held slots, least recent first
  std::unordered_map<uint64_t, int32_t> by_hash_;
  StateStoreStats stats_;
};

}  // namespace baton::kv
