#include "kv/state_store.h"

#include <stdexcept>
#include <string>

namespace baton::kv {

StateStore::StateStore(int32_t n_slots) {
  if (n_slots < 0) {
    throw std::invalid_argument("state store: negative slot count " + std::to_string(n_slots));
  }
  slots_.resize(static_cast<size_t>(n_slots));
  free_.reserve(slots_.size());
  for (int32_t s = n_slots - 1; s >= 0; --s) free_.push_back(s);
}

void StateStore::unname(int32_t slot) {
  Slot& s = slots_[slot];
  lru_.erase(s.lru_pos);
  auto it = by_hash_.find(s.hash);
  if (it != by_hash_.end() && it->second == slot) by_hash_.erase(it);
  s.state = Slot::State::Free;
}

std::optional<int32_t> StateStore::reserve() {
  int32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else if (!lru_.empty()) {
    slot = lru_.front();
    unname(slot);
    ++stats_.evictions;
  } else {
    return std::nullopt;
  }
  slots_[slot].state = Slot::State::Reserved;
  return slot;
}

void StateStore::commit(int32_t slot, uint64_t hash, int32_t n_pos) {
  if (slot < 0 || slot >= n_slots() || slots_[slot].state != Slot::State::Reserved) {
    throw std::logic_error("state store: commit of slot " + std::to_string(slot) +
                           " that was not reserved");
  }
  if (by_hash_.count(hash)) {  // taken twice at once (two requests on one prefix)
    cancel(slot);
    return;
  }
  Slot& s = slots_[slot];
  s.state = Slot::State::Held;
  s.hash = hash;
  s.n_pos = n_pos;
  s.lru_pos = lru_.insert(lru_.end(), slot);
  by_hash_[hash] = slot;
  ++stats_.taken;
}

void StateStore::cancel(int32_t slot) {
  if (slot < 0 || slot >= n_slots() || slots_[slot].state != Slot::State::Reserved) {
    throw std::logic_error("state store: cancel of slot " + std::to_string(slot) +
                           " that was not reserved");
  }
  slots_[slot].state = Slot::State::Free;
  free_.push_back(slot);
}

int32_t StateStore::find(uint64_t hash, int32_t n_pos) const {
  auto it = by_hash_.find(hash);
  if (it == by_hash_.end() || slots_[it->second].n_pos != n_pos) return -1;
  return it->second;
}

void StateStore::restored(int32_t slot) {
  if (slot < 0 || slot >= n_slots() || slots_[slot].state != Slot::State::Held) return;
  lru_.splice(lru_.end(), lru_, slots_[slot].lru_pos);
  ++stats_.restored;
}

void StateStore::drop(int32_t slot) {
  if (slot < 0 || slot >= n_slots() || slots_[slot].state != Slot::State::Held) return;
  unname(slot);
  free_.push_back(slot);
}

}  // namespace baton::kv
