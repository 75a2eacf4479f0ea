#pragma once
// A deterministic stand-in for the model, for scheduler tests. Its "KV" is the token id stored
// at each position of each block, so a wrong block table, a bad prefix reuse or a broken
// copy-on-write changes the output. The next token is a hash of the whole sequence so far,
// so batching and chunking cannot change results: expected_next() gives the reference.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "engine/engine.h"

namespace baton::engine {

struct FakeEngineConfig {
  int32_t n_vocab = 256;
  int32_t block_size = 16;
  int32_t eog_id = 2;  // also the only entry of info().eog_ids
  int32_t n_ctx_train = 1 << 20;
  uint64_t kv_bytes_per_block = 4096;
  uint64_t fingerprint = 0xFA4E;
  // Real time spent per step, so threaded tests can reproduce interleavings.
  int32_t sleep_us_per_step = 0;
  int32_t sleep_us_per_token = 0;
  // Virtual cost (microseconds) added to virtual_time_us() per step and per token.
  int64_t cost_us_per_step = 100;
  int64_t cost_us_per_token = 10;
  // Behave as a hybrid recurrent model: each request's "state" is the tokens it has run, in
  // order; a step may only continue a request where its state ends (or restart it at 0), and
  // the logits come from the state, so a scheduler that resumes a prefix without computing it
  // gets an error instead of an answer.
  bool recurrent = false;
  uint64_t state_bytes = 4096;  // recurrent mode: info().state_bytes_per_seq
  // > 0: the model mostly copies, predicting the token copy_period positions back (as a model
  // continuing a text it was given does), so drafts from an n-gram lookup are often right.
  int32_t copy_period = 0;
};

class FakeEngine : public Engine {
 public:
  explicit FakeEngine(FakeEngineConfig config = {});

  EngineInfo info() const override;
  void allocate_kv(int32_t n_blocks) override;
  void forward(const StepBatch& batch, StepOutput& out) override;
  void copy_block(int32_t src, int32_t dst, int32_t n_tokens) override;
  void release_sequence(uint64_t request_id) override;
  void allocate_state_slots(int32_t n_slots) override;
  void restore_state(uint64_t request_id, int32_t slot, int32_t n_pos) override;
  // Recurrent mode: the slot's state as bytes (state_bytes of them: its length, then its
  // tokens; a state too long for them reads as none), and set_state_slot reads them back.
  std::span<uint8_t> state_slot(int32_t slot) override;
  void set_state_slot(int32_t slot, int32_t n_pos) override;
  // The token ids stored in the block (block_size int32s): a restored block must hold the same.
  std::span<uint8_t> kv_block(int32_t block) override;

  // The token the fake model predicts after `seq` (the argmax of its logits).
  static int32_t expected_next(const std::vector<int32_t>& seq, int32_t n_vocab,
                               int32_t copy_period = 0);
  // The next `n` tokens a greedy request with `prompt` gets alone (stops after eog unless
  // ignore_eos).
  std::vector<int32_t> reference(std::vector<int32_t> prompt, int32_t n, bool ignore_eos) const;

  // Thread-safe accessors for assertions.
  std::vector<StepBatch> steps() const;
  size_t n_steps() const { return n_steps_.load(); }
  int64_t virtual_time_us() const { return virtual_us_.load(); }
  int32_t n_blocks() const;
  int64_t copies() const { return copies_.load(); }
  size_t live_states() const;  // recurrent mode: requests whose state is held
  int32_t n_state_slots() const;
  int64_t checkpoints_taken() const { return checkpoints_.load(); }
  int64_t restores() const { return restores_.load(); }

  // The next forward that contains this request throws (once per call of fail_on).
  void fail_on(uint64_t request_id);
  // Called inside forward with the batch before it runs (on the loop thread).
  void set_on_step(std::function<void(const StepBatch&)> hook);

 private:
  void check_chunk(const SeqChunk& c) const;
  // The logits after the chunk's token at index `row`.
  std::vector<float> logits_for(const SeqChunk& c, int32_t row) const;
  void run_state(const SeqChunk& c);

  FakeEngineConfig cfg_;
  mutable std::mutex mu_;
  std::vector<std::vector<int32_t>> kv_;  // [block][slot] = token id, -1 when never written
  std::vector<StepBatch> steps_;
  std::set<uint64_t> fail_ids_;
  std::function<void(const StepBatch&)> on_step_;
  std::map<uint64_t, std::vector<int32_t>> states_;  // recurrent mode
  // Checkpoint slots: the state (tokens taken in) saved there; empty slots hold nothing, and a
  // restore asking for another length than the slot holds throws.
  std::vector<std::vector<int32_t>> slots_;
  std::vector<bool> slot_used_;
  std::vector<std::vector<uint8_t>> slot_bytes_;  // state_slot's views, made on first use
  std::atomic<int64_t> checkpoints_{0};
  std::atomic<int64_t> restores_{0};
  std::atomic<size_t> n_steps_{0};
  std::atomic<int64_t> virtual_us_{0};
  std::atomic<int64_t> copies_{0};
};

}  // namespace baton::engine
