// LlamaModel's per-sequence state beside the KV blocks: the recurrent state of hybrid models
// and the window KV of sliding-window models, their checkpoint slots (allocated, written at
// block boundaries, restored on a prefix hit) and the checks on a step's checkpoint requests.
#include <fmt/format.h>

#include <new>
#include <stdexcept>

#include "model/llama_model.h"
#include "model/llama_model_acts.h"

namespace baton::model {

void LlamaModel::validate_sequence_state(size_t i, const std::vector<SeqSlice>& seqs) const {
  const SeqSlice& s = seqs[i];
  for (const std::string& why : {states_ ? states_->check(s.seq_id, s.start_pos) : "",
                                 window_ ? window_->check(s.seq_id, s.start_pos) : ""}) {
    if (!why.empty()) throw std::runtime_error(fmt::format("batch seq {}: {}", i, why));
  }
  for (size_t j = 0; j < i; ++j) {
    if (seqs[j].n_tokens > 0 && seqs[j].seq_id == s.seq_id) {
      throw std::runtime_error(fmt::format(
          "batch seqs {} and {}: both are sequence {} (one state per sequence)", j, i, s.seq_id));
    }
  }
}

uint64_t LlamaModel::state_checkpoint_bytes() const {
  const uint64_t bytes =
      (states_ ? states_->bytes_per_seq() : 0) + (window_ ? window_->checkpoint_bytes() : 0);
  return (bytes + 63) / 64 * 64;
}

void LlamaModel::allocate_state_slots(int32_t n) {
  if (!has_sequence_state()) {
    if (n > 0) throw std::runtime_error("state checkpoints asked of a model without state");
    return;
  }
  slot_arena_.reset();
  n_slots_ = 0;
  const uint64_t stride = state_checkpoint_bytes();
  if (n > 0) {
    try {
      slot_arena_ = std::make_unique_for_overwrite<uint8_t[]>(static_cast<size_t>(n) * stride);
    } catch (const std::bad_alloc&) {
      throw std::runtime_error(
          fmt::format("cannot allocate {} state checkpoints of {:.2f} MB: lower --state-ram-mb", n,
                      double(stride) / 1048576.0));
    }
    n_slots_ = n;
  }
  const uint64_t recurrent = states_ ? states_->bytes_per_seq() : 0;
  if (states_) states_->attach_slots(slot_arena_.get(), stride, n_slots_);
  if (window_) window_->attach_slots(slot_arena_.get() + recurrent, stride, n_slots_);
}

std::span<uint8_t> LlamaModel::state_slot(int32_t s) {
  if (s < 0 || s >= n_slots_) return {};
  const uint64_t stride = state_checkpoint_bytes();
  return {slot_arena_.get() + static_cast<uint64_t>(s) * stride, stride};
}

void LlamaModel::set_state_slot(int32_t s, int32_t n_pos) {
  if (s < 0 || s >= n_slots_) {
    throw std::runtime_error(fmt::format("state checkpoint slot {} does not exist", s));
  }
  if (states_) {
    if (n_pos > 0) {
      states_->commit_slot(s, n_pos);
    } else {
      states_->begin_slot(s);
    }
  }
  if (window_) window_->set_slot(s, n_pos);
}

std::string LlamaModel::restore_state(uint64_t seq_id, int32_t s, int32_t n_pos) {
  if (!has_sequence_state()) return "this model keeps no sequence state to restore";
  if (states_) {
    if (auto why = states_->restore(seq_id, s, n_pos); !why.empty()) return why;
  }
  if (window_) {
    if (auto why = window_->restore(seq_id, s, n_pos); !why.empty()) {
      if (states_) states_->release(seq_id);  // half a state is no state
      return why;
    }
  }
  return "";
}

void LlamaModel::validate_captures(const std::vector<SeqSlice>& seqs) const {
  std::vector<bool> used(static_cast<size_t>(n_state_slots()), false);
  for (size_t i = 0; i < seqs.size(); ++i) {
    const SeqSlice& s = seqs[i];
    int32_t last = s.start_pos;
    for (int32_t c = 0; c < s.n_captures; ++c) {
      const StateCapture& cap = s.captures[c];
      if (cap.slot < 0 || cap.slot >= n_state_slots() || used[cap.slot]) {
        throw std::runtime_error(fmt::format(
            "batch seq {}: state checkpoint slot {} is out of range ({} allocated) or taken "
            "twice in one step",
            i, cap.slot, n_state_slots()));
      }
      if (cap.pos <= last || cap.pos > s.start_pos + s.n_tokens) {
        throw std::runtime_error(
            fmt::format("batch seq {}: state checkpoint at position {} is not inside the slice "
                        "({}..{}] in increasing order",
                        i, cap.pos, s.start_pos, s.start_pos + s.n_tokens));
      }
      used[cap.slot] = true;
      last = cap.pos;
    }
  }
}

// Each sequence's state for this step: the recurrent state and its checkpoints' slots (hybrid
// models), the window blocks each row's windowed layers read and write (windowed models). A
// checkpoint slot being written holds nothing usable until commit_sequence_state.
void LlamaModel::begin_sequence_state(const std::vector<SeqSlice>& seqs, Acts& a) {
  if (window_) {
    for (const auto& s : seqs) {
      if (s.n_tokens == 0) continue;
      const int32_t* table = window_->begin(s.seq_id, s.start_pos, s.start_pos + s.n_tokens);
      a.row_window_table.insert(a.row_window_table.end(), s.n_tokens, table);
      for (int32_t c = 0; c < s.n_captures; ++c) window_->begin_slot(s.captures[c].slot);
    }
  }
  if (!states_) return;
  int64_t row0 = 0;
  for (const auto& s : seqs) {
    if (s.n_tokens == 0) continue;
    a.seqs.push_back({row0, s.n_tokens, nullptr, nullptr, {}});
    a.seq_state.push_back(states_->begin(s.seq_id, s.start_pos));
    auto& caps = a.seq_captures.emplace_back();
    for (int32_t c = 0; c < s.n_captures; ++c) {
      states_->begin_slot(s.captures[c].slot);
      caps.emplace_back(s.captures[c].pos - s.start_pos, states_->slot(s.captures[c].slot));
    }
    row0 += s.n_tokens;
  }
}

void LlamaModel::commit_sequence_state(const std::vector<SeqSlice>& seqs) {
  for (const auto& s : seqs) {
    if (s.n_tokens == 0) continue;
    const int32_t end = s.start_pos + s.n_tokens;
    if (states_) states_->commit(s.seq_id, end);
    if (window_) window_->commit(s.seq_id, end);
    for (int32_t c = 0; c < s.n_captures; ++c) {
      if (states_) states_->commit_slot(s.captures[c].slot, s.captures[c].pos);
      if (window_) window_->capture(s.seq_id, s.captures[c].pos, s.captures[c].slot);
    }
  }
}

}  // namespace baton::model
