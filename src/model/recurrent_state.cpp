#include "model/recurrent_state.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace baton::model {

RecurrentStates::RecurrentStates(const HParams& h)
    : offset_(static_cast<size_t>(h.n_layer), -1), conv_floats_(h.ssm.conv_floats()) {
  for (int32_t il = 0; il < h.n_layer; ++il) {
    if (!h.is_recurrent(il)) continue;
    offset_[il] = per_seq_;
    per_seq_ += conv_floats_ + h.ssm.matrix_floats();
  }
}

std::string RecurrentStates::check(uint64_t seq, int32_t start_pos) const {
  if (start_pos == 0) return "";
  const auto it = seqs_.find(seq);
  if (it == seqs_.end()) {
    return fmt::format(
        "sequence {} continues at position {} but has no recurrent state (a hybrid model's "
        "sequence must start at position 0 and run every later step from where it stopped)",
        seq, start_pos);
  }
  if (it->second.n_pos != start_pos) {
    return fmt::format(
        "sequence {} continues at position {} but its recurrent state holds {} positions (a "
        "hybrid model cannot resume a sequence from a prefix it has no state for)",
        seq, start_pos, it->second.n_pos < 0 ? "no usable" : std::to_string(it->second.n_pos));
  }
  return "";
}

float* RecurrentStates::begin(uint64_t seq, int32_t start_pos) {
  Entry& e = seqs_[seq];
  if (start_pos == 0) e.data.assign(static_cast<size_t>(per_seq_), 0.0f);
  e.n_pos = -1;
  return e.data.data();
}

void RecurrentStates::attach_slots(uint8_t* base, uint64_t stride, int32_t n) {
  slots_ = base;
  stride_ = stride;
  slot_pos_.assign(static_cast<size_t>(std::max(0, n)), -1);
}

std::string RecurrentStates::restore(uint64_t seq, int32_t s, int32_t n_pos) {
  if (s < 0 || s >= n_slots()) {
    return fmt::format("checkpoint slot {} is out of range ({} slots)", s, n_slots());
  }
  if (n_pos <= 0 || slot_pos_[s] != n_pos) {
    return fmt::format("checkpoint slot {} holds {} positions, not {}", s,
                       slot_pos_[s] < 0 ? "no usable" : std::to_string(slot_pos_[s]), n_pos);
  }
  Entry& e = seqs_[seq];
  const float* src = slot(s);
  e.data.assign(src, src + per_seq_);
  e.n_pos = n_pos;
  return "";
}

void RecurrentStates::commit(uint64_t seq, int32_t end_pos) {
  seqs_.at(seq).n_pos = end_pos;
}

}  // namespace baton::model
