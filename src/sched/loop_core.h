#pragma once
// The engine loop without its thread: submit() is thread-safe; step() runs one iteration and is
// called by exactly one thread (EngineLoop's, or a test driving steps by hand, which makes the
// scheduler deterministic to test).
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/engine.h"
#include "kv/block_pool.h"
#include "kv/disk_tier.h"
#include "kv/state_store.h"
#include "sched/draft_corpus.h"
#include "sched/engine_loop.h"
#include "sched/live_feed.h"
#include "sched/policy.h"
#include "sched/request.h"

namespace baton::sched {

class LoopCore {
 public:
  LoopCore(engine::Engine& engine, SchedConfig config);
  // Stops the disk tier first: its thread writes what is queued and wakes this loop meanwhile.
  ~LoopCore();
  LoopCore(const LoopCore&) = delete;
  LoopCore& operator=(const LoopCore&) = delete;

  const SchedConfig& config() const { return config_; }
  // Thread-safe. Validates and queues; throws SubmitError.
  std::shared_ptr<RequestHandle> submit(GenerateRequest req);
  // One iteration: cancellations, admissions, one forward pass, events. Returns false when
  // there was nothing to run.
  bool step();
  // Thread-safe: waits until a submission or cancel may need the loop, or the timeout.
  void wait_for_work(std::chrono::milliseconds timeout);
  void wake();
  // Thread-safe: further submits throw ShuttingDown. Queued requests finish at the next step.
  void stop_admitting();
  bool draining() const;  // thread-safe: stop_admitting() has been called
  // Loop thread: ends every request with `why`.
  void finish_all(FinishReason why);
  bool has_requests() const;  // loop thread: anything running or waiting
  // Loop thread: anything holding or owed a slot (parked requests resume during shutdown grace).
  bool has_running() const { return !running_.empty() || !parked_.empty(); }

  Metrics metrics() const;
  StatusSnapshot status() const;
  // Thread-safe: the step history live viewers read (live_feed.h).
  std::shared_ptr<const LiveFeed> live() const { return live_; }
  const kv::BlockPool& pool() const { return pool_; }  // loop thread (or after it stopped)
  // Hybrid models: the checkpoint bookkeeping (null when none are taken), loop thread.
  const kv::StateStore* state_store() const { return states_.get(); }
  int32_t checkpoint_every() const { return checkpoint_every_; }
  kv::DiskTier* disk_tier() { return disk_.get(); }  // null when off; tests slow its loads
  // Loop thread: block-table entries of every live request plus the blocks the disk tier's
  // queued saves and loads pin (each holds one pool reference), so tests can check that blocks
  // are conserved after every step.
  int64_t table_refs() const;

 private:
  using ReqPtr = std::shared_ptr<Request>;
  void reject(SubmitError::Code code, const std::string& msg);
  void reap_waiting();  // cancelled (or, once shutting down, all) queued requests end
  void reap_running(Clock::time_point now);
  void ensure_decode_blocks();
  bool make_room_for_decode(Request& r, Clock::time_point now);  // false: r parked or failed
  Request* kv_victim();  // the most recently admitted running request
  void park(Request& r, const char* why, bool keep_blocks, Clock::time_point now);
  bool drop_parked_blocks();
  void forget_kv(Request& r);  // its blocks back to the prefix cache; it recomputes from 0  //
                               // releases the kept blocks of one parked request
  bool may_park(const Request& r) const;
  void move_parked();  // parked requests leave running_ for parked_
  void resume(const ReqPtr& r, Clock::time_point now);
  int32_t blocks_needed_now(const Request& r) const;
  PolicyInput build_input();
  void admit(const std::vector<uint64_t>& ids, Clock::time_point now);
  void attach_prefix(Request& r);
  engine::StepBatch build_batch(const StepPlan& plan);
  bool grow_table(Request& r, int32_t n_positions);
  StepShape shape_of(const engine::StepBatch& batch);
  void run_batch(const engine::StepBatch& batch, Clock::time_point start);
  // predicted_ms: what the cost model expected of the step (0: not yet measured).
  void apply_outputs(const engine::StepBatch& batch, const engine::StepOutput& out,
                     Clock::time_point start, Clock::time_point end, double predicted_ms);
  void emit_token(Request& r, const float* logits, Clock::time_point now);
  bool sample_token(Request& r, const float* logits, engine::SampledToken& s,
                    Clock::time_point now);  // finishes r on failure
  // Runs r's stop condition on ev's token, filling ev.text; a throw is reported in `error`.
  bool stop_condition_met(Request& r, TokenEvent& ev, std::string& error);
  void commit_full_blocks(Request& r);
  // Speculation (loop_speculate.cpp).
  bool may_speculate(const StepPlan& plan) const;
  void add_drafts(engine::StepBatch& batch);  // decode rows gain drafted tokens
  void remember_output(const Request& r);     // --speculate suffix: into the corpus
  void worth_drafting(
      const Request& r, int32_t start_pos, const StepShape& shape,
      std::vector<int32_t>& draft) const;  // cuts drafts that cost more than they save
  // Samples each row of a decode chunk that carried drafts, keeping drafts while they match.
  void verify_drafts(Request& r, const engine::SeqChunk& c,
                     const std::vector<std::vector<float>>& logits, size_t first,
                     Clock::time_point now);
  // The default latency target (loop_calibrate.cpp): sets config_.itl_target_ms.
  void calibrate_itl_target();
  struct Scratch {  // a calibration sequence: id, blocks, and the next position it writes
    engine::SeqChunk seq;
    int32_t pos = 0;
  };
  std::vector<double> run_calibration(Scratch& decoder, Scratch& prefiller);
  // The KV disk tier (loop_disk.cpp).
  void open_disk_tier();
  // State checkpoints of models with sequence state (loop_states.cpp).
  void open_state_store();
  kv::ResumableAt resumable() const;      // empty for models without state
  bool restore_prefix_state(Request& r);  // false: r reuses nothing after all
  void plan_checkpoints(const Request& r, engine::SeqChunk& c);
  void settle_checkpoints(bool step_ok);
  std::vector<kv::DiskBlock> disk_run(const Request& r) const;
  // True: r is Loading. tail_block / tail_tokens: the RAM lookup's partial tail, if any.
  bool start_disk_load(Request& r, int32_t tail_block, int32_t tail_tokens, Clock::time_point now);
  void save_to_disk(Request& r, bool everything);
  void apply_disk_done(Clock::time_point now);
  // Models with state: a load's checkpoint arrived (or did not); true when it is now named.
  bool settle_loaded_checkpoint(int32_t slot, bool ok);
  bool withdraw_disk_save();  // frees the pins of a queued save; false when none is queued
  void finish_load(Request& r, size_t n_blocks, Clock::time_point now);
  void finish(Request& r, FinishReason why, const std::string& error, Clock::time_point now);
  void release_blocks(Request& r, bool keep_partial);
  void publish(Clock::time_point now);
  void count_step(int32_t decode_rows, int32_t prefill_tokens, double step_ms);
  // The live feed (loop_live.cpp): a request event for the next step record, and the record.
  void note(const Request& r, const char* what, std::string detail);
  void note_gap(Request& r, double gap_ms);
  void record_step(Clock::time_point start, Clock::time_point end, double predicted_ms,
                   std::vector<LiveRow> rows);
  void flush_notes();  // a boundary without a forward pass that still had events
  Request* find_running(uint64_t id);
  void drop_finished();  // removes ended requests from running_

  engine::Engine& engine_;
  engine::EngineInfo info_;
  SchedConfig config_;
  kv::BlockPool pool_;
  std::unique_ptr<kv::DiskTier> disk_;  // after pool_: its thread stops before the pool goes
  std::unique_ptr<kv::StateStore> states_;
  int32_t checkpoint_every_ = 0;  // blocks between checkpoints (0: none taken)
  struct PendingCheckpoint {
    int32_t slot;
    uint64_t hash;
    int32_t pos;
  };
  std::vector<PendingCheckpoint> pending_checkpoints_;  // the step being run takes these
  std::vector<PendingCheckpoint> loading_checkpoints_;  // disk loads are reading these
  CostEstimator costs_;
  uint64_t next_id_ = 1;   // guarded by mu_
  uint64_t next_seq_ = 0;  // guarded by mu_

  std::vector<ReqPtr> running_;  // loop thread only; admission order
  std::vector<ReqPtr> parked_;   // loop thread only; arrival order (resumed oldest first)
  double io_seconds_ = 0;        // loop thread: time spent on the disk tier
  int64_t disk_pins_ = 0;        // loop thread: pool references held by disk jobs

  mutable std::mutex mu_;  // guards everything below
  std::condition_variable cv_;
  std::deque<ReqPtr> waiting_;  // arrival order; only the loop pops
  bool admitting_ = true;
  bool work_pending_ = false;
  Metrics metrics_;
  SessionAffinity sessions_;
  DraftCorpus corpus_{config_.spec_corpus_tokens};  // loop thread only
  std::vector<RequestStatus> running_status_;

  std::shared_ptr<LiveFeed> live_ =
      std::make_shared<LiveFeed>(static_cast<size_t>(std::max(16, config_.live_steps)));
  std::vector<LiveEvent> live_events_;  // loop thread: noted since the last record
  LiveGap live_gap_;                    // loop thread: the worst gap of the step being applied
};

// Blocks for the pool: --kv-ram-mb ÷ kv_bytes_per_block, or ctx × parallel plus headroom.
int32_t resolve_kv_blocks(const SchedConfig& config, const engine::EngineInfo& info);

}  // namespace baton::sched
