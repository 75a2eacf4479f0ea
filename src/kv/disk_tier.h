#pragma once
// The disk tier's I/O thread in front of a DiskStore. The engine loop hands it saves (blocks it
// keeps pinned until the save completes) and loads (fresh blocks a Loading request owns), and
// collects completions at the start of a step; it never waits for the disk. Loads go before
// saves: a request is waiting on each load, nobody on a save.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_set>
#include <vector>

#include "kv/disk_store.h"

namespace baton::kv {

// Blocks to write; `data` must stay valid and unchanged until the completion is taken.
struct DiskSave {
  std::vector<DiskBlock> blocks;
  std::vector<const uint8_t*> data;
  // Copies of the state checkpoints taken at some blocks' ends (empty: none at that block); a
  // copy, because a checkpoint slot can be reused before the write.
  std::vector<std::vector<uint8_t>> states;
  std::vector<int32_t> pool_blocks;  // the caller's pins, handed back in the completion
};

// Blocks to read into `dst`; expected[i] names block i (hash, parent, tokens).
struct DiskLoad {
  uint64_t request_id = 0;
  std::vector<DiskBlock> expected;
  std::vector<uint8_t*> dst;
  std::vector<int32_t> pool_blocks;
  // Models with sequence state: the last block's checkpoint goes to state_dst, the bytes of the
  // caller's checkpoint slot state_slot (reserved until the completion is taken).
  uint8_t* state_dst = nullptr;
  int32_t state_slot = -1;
};

struct DiskDone {
  enum class Kind { Save, Load } kind = Kind::Save;
  uint64_t request_id = 0;  // loads
  std::vector<int32_t> pool_blocks;
  size_t n_ok = 0;  // loads: leading blocks read and verified; saves: blocks written (all or 0)
  int32_t state_slot = -1;  // loads: DiskLoad::state_slot
  bool state_ok = false;    // loads: the checkpoint is in state_slot, checked
  double seconds = 0;
};

class DiskTier {
 public:
  // Opens the store (throws like DiskStore) and starts the I/O thread. `on_done` runs on the I/O
  // thread after each completion is queued (the loop's wake-up).
  DiskTier(DiskStoreOptions options, std::function<void()> on_done);
  // Writes the saves still queued, drops the loads, joins.
  ~DiskTier();
  DiskTier(const DiskTier&) = delete;
  DiskTier& operator=(const DiskTier&) = delete;

  size_t leading_on_disk(std::span<const uint64_t> hashes) const {
    return store_.leading_on_disk(hashes);
  }
  bool has_state(uint64_t hash) const { return store_.has_state(hash); }
  std::optional<DiskStore::Tail> best_tail(uint64_t parent, std::span<const int32_t> next,
                                           int32_t limit) const {
    return store_.best_tail(parent, next, limit);
  }
  // On disk or queued to be written.
  bool known(uint64_t hash) const;
  void save(DiskSave job);
  void load(DiskLoad job);
  // Takes back the most recently queued save, among those not started whose pool blocks
  // satisfy `frees`, and returns the blocks it pins; nullopt when there is none. Under KV
  // pressure a block is worth more in RAM now than on disk later: the loop frees it rather than
  // wait for the write.
  std::optional<std::vector<int32_t>> withdraw_save(
      const std::function<bool(const std::vector<int32_t>&)>& frees);
  std::vector<DiskDone> take_done();
  DiskStoreStats stats() const { return store_.stats(); }
  size_t blocks_per_segment() const { return blocks_per_segment_; }

  // Tests only: a slow or uneven disk. Before each load (save) the I/O thread calls the load
  // (save) hook and sleeps for what it returns. Hooks run on that thread only, one job at a
  // time, so a seeded generator inside one yields the same sequence on every run; one may also
  // block until its test lets the job go. The hook runs before the job is picked, so a load
  // queued meanwhile still goes first. Not called for the saves written while stopping.
  using DelayHook = std::function<std::chrono::microseconds()>;
  void set_load_delay(DelayHook hook);
  void set_save_delay(DelayHook hook);
  void set_load_delay(std::chrono::milliseconds d);  // every load the same
  void set_save_delay(std::chrono::milliseconds d);  // every save the same
  // Jobs queued or running: a test that holds the I/O thread in a hook knows what is pending.
  size_t jobs_in_flight() const;

 private:
  void run();
  void do_save(DiskSave& job);
  void do_load(DiskLoad& job);
  void push_done(DiskDone d);

  DiskStore store_;
  std::function<void()> on_done_;
  size_t blocks_per_segment_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<DiskSave> saves_;
  std::deque<DiskLoad> loads_;
  std::unordered_set<uint64_t> pending_;  // hashes queued or being saved
  std::vector<DiskDone> done_;
  DelayHook load_delay_;
  DelayHook save_delay_;
  bool busy_ = false;  // a job is being run
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace baton::kv
