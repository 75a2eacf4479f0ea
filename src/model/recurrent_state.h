#pragma once
// The recurrent state of each sequence of a hybrid model: per DeltaNet layer, the convolution's
// last d_conv - 1 inputs and one head_dim x head_dim matrix per value head. Unlike KV, a state
// holds a whole prefix at once and cannot be cut back to a shorter one, so each sequence's
// state knows how many positions it has taken in, and a step may only continue it from there
// (or start the sequence again from position 0, which clears it).
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/hparams.h"

namespace baton::model {

class RecurrentStates {
 public:
  explicit RecurrentStates(const HParams& h);

  uint64_t bytes_per_seq() const { return static_cast<uint64_t>(per_seq_) * sizeof(float); }
  size_t live() const { return seqs_.size(); }

  // Empty when sequence `seq` may run a step from `start_pos`, else why not (one line).
  std::string check(uint64_t seq, int32_t start_pos) const;
  // The state for a step from start_pos (check() passed): zeroed at position 0. Until commit(),
  // the state counts as mid-step, so a step that throws leaves it unusable rather than wrong.
  float* begin(uint64_t seq, int32_t start_pos);
  void commit(uint64_t seq, int32_t end_pos);
  void release(uint64_t seq) { seqs_.erase(seq); }
  void clear() { seqs_.clear(); }

  // Checkpoint slots: copies of some sequence's state after n_pos positions, which a step writes
  // at a position inside it (delta_net's captures) and another sequence can start from. Their
  // storage is the model's (slot s at base + s * stride, bytes_per_seq() of it, float-aligned).
  void attach_slots(uint8_t* base, uint64_t stride, int32_t n);
  int32_t n_slots() const { return static_cast<int32_t>(slot_pos_.size()); }
  float* slot(int32_t s) {
    return reinterpret_cast<float*>(slots_ + static_cast<uint64_t>(s) * stride_);
  }
  // A step is writing slot s: until commit_slot it holds nothing a restore may use.
  void begin_slot(int32_t s) { slot_pos_[s] = -1; }
  void commit_slot(int32_t s, int32_t n_pos) { slot_pos_[s] = n_pos; }
  // Sequence `seq` continues from slot s, which must hold a state of n_pos positions: "" when it
  // did, else why not (one line) and nothing changed.
  std::string restore(uint64_t seq, int32_t s, int32_t n_pos);

  // Where layer il's parts sit in a sequence's state (il must be recurrent).
  float* conv(float* state, int32_t il) const { return state + offset_[il]; }
  float* matrix(float* state, int32_t il) const { return state + offset_[il] + conv_floats_; }

 private:
  struct Entry {
    int32_t n_pos = -1;  // positions taken in; -1 mid-step
    std::vector<float> data;
  };
  std::unordered_map<uint64_t, Entry> seqs_;
  std::vector<int64_t> offset_;  // per layer, into a sequence's floats
  int64_t conv_floats_ = 0;
  int64_t per_seq_ = 0;
  uint8_t* slots_ = nullptr;  // n_slots x stride_ (the model's storage)
  uint64_t stride_ = 0;
  std::vector<int32_t> slot_pos_;  // positions each slot holds; -1: nothing usable
};

}  // namespace baton::model
