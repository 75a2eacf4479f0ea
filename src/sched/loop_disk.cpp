// LoopCore and the KV disk tier: a request whose prefix the RAM pool lacks but the disk holds is
// admitted as Loading while the tier's I/O thread reads its blocks, and joins a later step; the
// full blocks of every request are written behind it (segments as they fill, the rest when it
// ends or is parked). The loop only queues work and collects completions, never waits on a disk.
#include <fmt/format.h>

#include <algorithm>

#include "sched/loop_core.h"
#include "util/log.h"

namespace baton::sched {

namespace {

// Adds the time since `t0` to the loop's disk-tier cost on scope exit.
class IoClock {
 public:
  explicit IoClock(double& total) : total_(total), t0_(Clock::now()) {}
  ~IoClock() { total_ += ms_between(t0_, Clock::now()) / 1000.0; }
  IoClock(const IoClock&) = delete;
  IoClock& operator=(const IoClock&) = delete;

 private:
  double& total_;
  Clock::time_point t0_;
};

}  // namespace

void LoopCore::open_disk_tier() {
  if (config_.kv_disk_dir.empty() || config_.kv_disk_space_mb <= 0) return;
  if (!config_.prefix_cache) {
    throw std::runtime_error("--kv-disk-dir needs the prefix cache: drop --no-prefix-cache");
  }
  const auto probe = engine_.kv_block(0);
  if (probe.empty()) {
    throw std::runtime_error("--kv-disk-dir: this engine cannot expose its KV blocks");
  }
  kv::DiskStoreOptions o;
  o.dir = config_.kv_disk_dir;
  o.budget_bytes = static_cast<uint64_t>(config_.kv_disk_space_mb) << 20;
  o.layout.fingerprint = info_.fingerprint;
  o.layout.block_size = static_cast<uint32_t>(pool_.block_size());
  o.layout.block_bytes = probe.size();
  o.layout.layout = info_.kv_layout;
  o.layout.state_bytes = states_ ? info_.state_bytes_per_seq : 0;
  disk_ = std::make_unique<kv::DiskTier>(std::move(o), [this] { wake(); });
  metrics_.kv_disk_enabled = true;
}

// The full blocks after the RAM chain that the disk holds, named as the pool would name them.
std::vector<kv::DiskBlock> LoopCore::disk_run(const Request& r) const {
  const int32_t bs = pool_.block_size();
  std::vector<kv::DiskBlock> want;
  std::vector<uint64_t> hashes;
  uint64_t parent = r.chain_hash;
  // As in the RAM lookup, the last token of what is to be filled is always computed.
  for (int32_t pos = r.n_kv; pos + bs <= r.n_fill - 1; pos += bs) {
    kv::DiskBlock b;
    b.tokens.assign(r.tokens.begin() + pos, r.tokens.begin() + pos + bs);
    b.parent = parent;
    b.hash = pool_.chain_hash(parent, b.tokens);
    parent = b.hash;
    hashes.push_back(b.hash);
    want.push_back(std::move(b));
  }
  want.resize(disk_->leading_on_disk(hashes));
  // A model with sequence state continues only from a checkpoint: up to the deepest block that
  // carries one.
  if (states_) {
    while (!want.empty() && !disk_->has_state(want.back().hash)) want.pop_back();
  }
  return want;
}

bool LoopCore::start_disk_load(Request& r, int32_t tail_block, int32_t tail_tokens,
                               Clock::time_point now) {
  // The RAM chain already reaches the last position to fill: nothing to look for.
  if (r.n_kv >= r.n_fill - 1) return false;
  IoClock clock(io_seconds_);
  const int32_t bs = pool_.block_size();
  std::vector<kv::DiskBlock> want = disk_run(r);
  const auto n_full = static_cast<int32_t>(want.size());
  // Then the prompt's last, partial block may start a longer sequence's stored block.
  const int32_t after = r.n_kv + n_full * bs;
  const uint64_t parent = want.empty() ? r.chain_hash : want.back().hash;
  int32_t tail_matched = 0;
  // A state is never taken inside a block: a model with state has no use for a partial tail.
  if (const int32_t left = r.n_fill - 1 - after; left > 0 && !states_) {
    std::span<const int32_t> next(r.tokens.data() + after, static_cast<size_t>(left));
    auto t = disk_->best_tail(parent, next, std::min(left, bs));
    if (t && t->matched > (n_full == 0 ? tail_tokens : 0)) {
      tail_matched = t->matched;
      want.push_back(std::move(t->block));
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++(want.empty() ? metrics_.kv_disk_misses_total : metrics_.kv_disk_hits_total);
  }
  if (want.empty()) return false;
  kv::DiskLoad job;
  job.request_id = r.id;
  if (states_) {
    // The checkpoint at the run's end goes into a slot held reserved until the load completes.
    const auto slot = states_->reserve();
    if (!slot) return false;
    engine_.set_state_slot(*slot, 0);
    job.state_slot = *slot;
    job.state_dst = engine_.state_slot(*slot).data();
    loading_checkpoints_.push_back(
        {*slot, want.back().hash, r.n_kv + static_cast<int32_t>(want.size()) * bs});
  }
  for (size_t i = 0; i < want.size(); ++i) {
    auto b = pool_.allocate();
    if (!b) break;
    pool_.retain(*b);  // the load's own pin: a cancel cannot free a block being written
    ++disk_pins_;
    r.block_table.push_back(*b);
    job.pool_blocks.push_back(*b);
    job.dst.push_back(engine_.kv_block(*b).data());
  }
  if (job.pool_blocks.size() < want.size()) {
    tail_matched = 0;  // the tail got no block
    if (states_) {
      // Short of blocks, the run cannot reach its checkpoint: load nothing.
      for (int32_t b : job.pool_blocks) {
        pool_.release(b);
        pool_.release(b);
        r.block_table.pop_back();
      }
      disk_pins_ -= static_cast<int64_t>(job.pool_blocks.size());
      job.pool_blocks.clear();
    }
  }
  if (job.pool_blocks.empty()) {
    if (job.state_slot >= 0) settle_loaded_checkpoint(job.state_slot, false);
    return false;
  }
  want.resize(job.pool_blocks.size());
  job.expected = std::move(want);
  if (tail_block >= 0) pool_.release(tail_block);  // the disk reaches at least as far
  r.state = RequestState::Loading;
  r.channel->set_state(RequestState::Loading);
  r.loading_since = now;
  r.loading_full = std::min(n_full, static_cast<int32_t>(job.pool_blocks.size()));
  r.loading_tail = tail_matched;
  log::info("req={} loading {} tokens of its prefix from the disk tier ({} were in RAM)", r.id,
            r.loading_full * bs + tail_matched, r.n_kv);
  note(r, "loading",
       fmt::format("{} tokens from the disk tier", r.loading_full * bs + tail_matched));
  disk_->load(std::move(job));
  return true;
}

void LoopCore::finish_load(Request& r, size_t n_blocks, Clock::time_point now) {
  const int32_t bs = pool_.block_size();
  const auto wanted = static_cast<int32_t>(r.block_table.size()) - r.n_named_blocks;  // loading
  const auto loaded = static_cast<int32_t>(n_blocks);
  const int32_t before = r.n_kv;
  r.n_kv += std::min(loaded, r.loading_full) * bs;
  // The tail block is used for its matching positions only; the prefill overwrites the rest.
  if (r.loading_tail > 0 && loaded > r.loading_full) r.n_kv += r.loading_tail;
  r.disk_tokens += r.n_kv - before;
  r.loading_full = r.loading_tail = 0;
  commit_full_blocks(r);  // the loaded blocks become RAM prefix-cache blocks
  // The sequence's state starts from the checkpoint that came with the run (named by then).
  if (states_ && loaded > 0) restore_prefix_state(r);
  if (r.parks == 0) r.cached_tokens = r.n_kv;
  r.state = RequestState::Prefilling;
  r.channel->set_state(RequestState::Prefilling);
  const double ms = r.loading_since ? ms_between(*r.loading_since, now) : 0;
  r.loading_since.reset();
  note(r, "loaded", fmt::format("{} tokens in {:.0f} ms", r.n_kv - before, ms));
  log::info(
      "req={} loaded {} of {} blocks from the disk tier in {:.1f} ms: {}/{} positions "
      "ready, {} to compute",
      r.id, n_blocks, wanted, ms, r.n_kv, r.n_fill, r.remaining_prompt());
}

void LoopCore::apply_disk_done(Clock::time_point now) {
  if (!disk_) return;
  IoClock clock(io_seconds_);
  for (auto& d : disk_->take_done()) {
    if (d.kind == kv::DiskDone::Kind::Load) {
      // The checkpoint is named whether or not its request is still here.
      const bool state_ok = d.state_slot >= 0 && settle_loaded_checkpoint(d.state_slot, d.state_ok);
      Request* r = find_running(d.request_id);
      if (r && r->state == RequestState::Loading) {
        // Without its checkpoint a state model's loaded run is of no use: it is recomputed.
        finish_load(*r, !states_ || state_ok ? d.n_ok : 0, now);
      }
      std::lock_guard<std::mutex> lock(mu_);
      ++metrics_.kv_disk_loads_total;
      metrics_.kv_disk_loaded_tokens_total += d.n_ok * static_cast<uint64_t>(pool_.block_size());
      metrics_.kv_disk_load_seconds.observe(d.seconds);
    } else {
      std::lock_guard<std::mutex> lock(mu_);
      if (d.n_ok > 0) ++metrics_.kv_disk_saves_total;
      metrics_.kv_disk_save_seconds.observe(d.seconds);
    }
    for (int32_t b : d.pool_blocks) pool_.release(b);
    disk_pins_ -= static_cast<int64_t>(d.pool_blocks.size());
  }
}

bool LoopCore::withdraw_disk_save() {
  if (!disk_) return false;
  // Only a save holding the last reference to one of its blocks frees anything.
  auto blocks = disk_->withdraw_save([this](const std::vector<int32_t>& pins) {
    return std::any_of(pins.begin(), pins.end(), [&](int32_t b) { return pool_.refcount(b) == 1; });
  });
  if (!blocks) return false;
  for (int32_t b : *blocks) pool_.release(b);
  disk_pins_ -= static_cast<int64_t>(blocks->size());
  log::info("kv disk tier: a queued save of {} blocks withdrawn (KV pressure)", blocks->size());
  return true;
}

void LoopCore::save_to_disk(Request& r, bool everything) {
  if (!disk_) return;
  const auto per_segment = static_cast<int32_t>(disk_->blocks_per_segment());
  if (!everything && r.n_named_blocks - r.disk_checked_blocks < per_segment) return;
  if (static_cast<int32_t>(r.block_table.size()) < r.n_named_blocks) return;  // already released
  IoClock clock(io_seconds_);
  const int32_t bs = pool_.block_size();
  kv::DiskSave job;
  auto flush = [&] {
    if (job.blocks.empty()) return;
    disk_->save(std::move(job));
    job = {};
  };
  uint64_t parent = r.disk_checked_hash;
  for (int32_t i = r.disk_checked_blocks; i < r.n_named_blocks; ++i) {
    std::span<const int32_t> toks(r.tokens.data() + static_cast<size_t>(i) * bs,
                                  static_cast<size_t>(bs));
    const uint64_t h = pool_.chain_hash(parent, toks);
    if (disk_->known(h)) {
      flush();  // segments hold runs of blocks the disk lacks
    } else {
      const int32_t b = r.block_table[static_cast<size_t>(i)];
      pool_.retain(b);  // pinned until written: eviction cannot hand it out mid-write
      ++disk_pins_;
      kv::DiskBlock block;
      block.hash = h;
      block.parent = parent;
      block.tokens.assign(toks.begin(), toks.end());
      job.blocks.push_back(std::move(block));
      job.data.push_back(engine_.kv_block(b).data());
      // The checkpoint taken at this block's end, when one is held: a copy, as its slot can be
      // reused before the write.
      const int32_t slot = states_ ? states_->find(h, (i + 1) * bs) : -1;
      if (slot >= 0) {
        const auto bytes = engine_.state_slot(slot);
        job.states.resize(job.blocks.size());
        job.states.back().assign(bytes.begin(), bytes.end());
      }
      job.pool_blocks.push_back(b);
      if (static_cast<int32_t>(job.blocks.size()) == per_segment) flush();
    }
    parent = h;
  }
  flush();
  r.disk_checked_blocks = r.n_named_blocks;
  r.disk_checked_hash = parent;
}

}  // namespace baton::sched
