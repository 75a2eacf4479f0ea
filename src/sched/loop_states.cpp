// LoopCore: state checkpoints of models whose sequences keep state beside their KV blocks (the
// recurrent state of hybrid models, the windowed layers' KV of sliding-window models). A
// request's state summarises its prefix and cannot be rebuilt from the blocks, so a cached prefix
// is reusable only up to a block after which a checkpoint of the state was taken. Steps take them
// at block ends (every N blocks and at the end of each prompt's last full block); admission cuts a
// prefix match back to the deepest checkpointed block and starts the request's state there. The
// KV disk tier stores checkpoints with the blocks they end (loop_disk.cpp) and names the ones it
// reads back here, as if a step had taken them.
#include <fmt/format.h>

#include <algorithm>

#include "sched/loop_core.h"
#include "util/log.h"

namespace baton::sched {

namespace {

// Most checkpoint slots, whatever --state-ram-mb says (bookkeeping stays small).
constexpr int64_t kMaxStateSlots = 1 << 20;

// A checkpoint every N blocks where it costs at most 8 blocks of KV; a bigger state is taken
// less often, so checkpoints cost about as much memory per block as 8 blocks of KV.
int32_t auto_checkpoint_blocks(uint64_t state_bytes, uint64_t kv_bytes_per_block) {
  const uint64_t per8 = 8 * std::max<uint64_t>(1, kv_bytes_per_block);
  return static_cast<int32_t>(std::clamp<uint64_t>((state_bytes + per8 - 1) / per8, 1, 1 << 20));
}

}  // namespace

void LoopCore::open_state_store() {
  const uint64_t per = info_.state_bytes_per_seq;
  const double mb = double(per) / 1048576.0;
  const std::string head = fmt::format(
      "model {} keeps state beside its KV blocks (a recurrent state, or its windowed layers' "
      "KV): {:.2f} MB per checkpoint",
      info_.model_name, mb);
  const int64_t slots =
      config_.prefix_cache && config_.state_ram_mb > 0
          ? static_cast<int64_t>(std::min<uint64_t>(
                (static_cast<uint64_t>(config_.state_ram_mb) << 20) / per, kMaxStateSlots))
          : 0;
  if (slots == 0) {
    const std::string why =
        !config_.prefix_cache ? "--no-prefix-cache"
        : config_.state_ram_mb <= 0
            ? "--state-ram-mb 0"
            : fmt::format("--state-ram-mb {} holds no {:.2f} MB state checkpoint (raise it)",
                          config_.state_ram_mb, mb);
    // Without checkpoints a stored prefix could never be continued.
    const std::string disk = config_.kv_disk_dir.empty() ? "" : "; KV disk tier off";
    log::info("{}; no prefix reuse ({}): every request computes its whole prompt{}", head, why,
              disk);
    config_.prefix_cache = false;
    config_.kv_disk_dir.clear();
    return;
  }
  checkpoint_every_ = config_.state_checkpoint_blocks > 0
                          ? config_.state_checkpoint_blocks
                          : auto_checkpoint_blocks(per, info_.kv_bytes_per_block);
  config_.state_checkpoint_blocks = checkpoint_every_;
  engine_.allocate_state_slots(static_cast<int32_t>(slots));
  states_ = std::make_unique<kv::StateStore>(static_cast<int32_t>(slots));
  std::string disk;
  if (!config_.kv_disk_dir.empty()) {
    disk = engine_.state_slot(0).size() == per
               ? "; the KV disk tier stores each checkpoint with the block it ends"
               : "; KV disk tier off (this engine cannot expose its checkpoints)";
    if (engine_.state_slot(0).size() != per) config_.kv_disk_dir.clear();
  }
  log::info(
      "{}; prefix reuse through state checkpoints: {} slots in --state-ram-mb {}, one every {} "
      "blocks ({} tokens, {:.2f} MB of checkpoint per block) and one at the end of each prompt's "
      "last full block{}",
      head, slots, config_.state_ram_mb, checkpoint_every_, checkpoint_every_ * pool_.block_size(),
      mb / checkpoint_every_, disk);
}

kv::ResumableAt LoopCore::resumable() const {
  if (!states_) return {};
  const kv::StateStore* st = states_.get();
  return [st](uint64_t hash, int32_t n_pos) { return st->find(hash, n_pos) >= 0; };
}

bool LoopCore::restore_prefix_state(Request& r) {
  const int32_t slot = states_->find(r.chain_hash, r.n_kv);
  try {
    if (slot < 0) throw std::runtime_error("its checkpoint is gone");
    engine_.restore_state(r.id, slot, r.n_kv);
    states_->restored(slot);
    return true;
  } catch (const std::exception& e) {
    log::warn(
        "req={} cannot start its state from the checkpoint at position {} ({}); it computes "
        "its whole prompt",
        r.id, r.n_kv, e.what());
    if (slot >= 0) states_->drop(slot);
    for (auto it = r.block_table.rbegin(); it != r.block_table.rend(); ++it) pool_.release(*it);
    r.block_table.clear();
    r.n_kv = 0;
    r.n_named_blocks = 0;
    r.chain_hash = pool_.root_hash();
    engine_.release_sequence(r.id);
    return false;
  }
}

void LoopCore::plan_checkpoints(const Request& r, engine::SeqChunk& c) {
  if (!states_ || checkpoint_every_ <= 0) return;
  const int32_t bs = pool_.block_size();
  const int32_t end = c.start_pos + static_cast<int32_t>(c.tokens.size());
  const int32_t prompt_blocks = r.n_prompt / bs;
  // The chain hash of the first `hashed` blocks; the named ones all end at or before start_pos.
  uint64_t hash = r.chain_hash;
  int32_t hashed = r.n_named_blocks;
  for (int32_t k = c.start_pos / bs + 1; k * bs <= end; ++k) {
    if (k % checkpoint_every_ != 0 && k != prompt_blocks) continue;
    for (; hashed < k; ++hashed) {
      hash = pool_.chain_hash(
          hash, std::span<const int32_t>(r.tokens.data() + hashed * bs, static_cast<size_t>(bs)));
    }
    // Another request took it already, or takes it in this step (the same prefix twice).
    if (states_->contains(hash) ||
        std::any_of(pending_checkpoints_.begin(), pending_checkpoints_.end(),
                    [&](const PendingCheckpoint& p) { return p.hash == hash; })) {
      continue;
    }
    const auto slot = states_->reserve();
    if (!slot) return;  // every slot is being written by this step
    c.checkpoints.push_back({k * bs, *slot});
    pending_checkpoints_.push_back({*slot, hash, k * bs});
  }
}

bool LoopCore::settle_loaded_checkpoint(int32_t slot, bool ok) {
  auto it = std::find_if(loading_checkpoints_.begin(), loading_checkpoints_.end(),
                         [&](const PendingCheckpoint& p) { return p.slot == slot; });
  if (it == loading_checkpoints_.end()) return false;
  const PendingCheckpoint p = *it;
  loading_checkpoints_.erase(it);
  if (ok) {
    try {
      engine_.set_state_slot(p.slot, p.pos);
    } catch (const std::exception& e) {
      log::warn("kv disk tier: a checkpoint read back for position {} is unusable: {}", p.pos,
                e.what());
      ok = false;
    }
  }
  if (ok) {
    states_->commit(p.slot, p.hash, p.pos);
  } else {
    states_->cancel(p.slot);
  }
  return ok;
}

void LoopCore::settle_checkpoints(bool step_ok) {
  for (const auto& p : pending_checkpoints_) {
    if (step_ok) {
      states_->commit(p.slot, p.hash, p.pos);
    } else {
      states_->cancel(p.slot);
    }
  }
  pending_checkpoints_.clear();
}

}  // namespace baton::sched
