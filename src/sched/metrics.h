#pragma once
// Counters the engine loop keeps and the server exports (/metrics, /status). The loop updates
// them under its own lock; readers take a copy with EngineLoop::metrics().
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sched/session_affinity.h"

namespace baton::sched {

// Prometheus-style cumulative histogram over fixed upper bounds (seconds).
struct Histogram {
  std::vector<double> bounds;    // ascending upper bounds; +Inf is implicit
  std::vector<uint64_t> counts;  // per bound (not cumulative), plus one for +Inf
  double sum = 0;
  uint64_t count = 0;
  // Inter-token gaps: fine steps where CPU decode gaps sit (tens to hundreds of ms), 5 ms .. 30 s.
  static Histogram inter_token_seconds();
  // Whole-request spans (TTFT, queue, end to end): 1 ms .. 1 h, so long generations and long
  // queue waits still land in a finite bucket.
  static Histogram request_seconds();
  // Engine steps: from a tiny model's half millisecond to a 30 s prefill chunk.
  static Histogram step_seconds();
  // A share, 0 .. 1 in tenths (0 has a bucket of its own).
  static Histogram fractions();
  // Whole counts 1 .. n.
  static Histogram counts_to(int n);
  void observe(double value);
};

struct Metrics {
  Histogram time_to_first_token = Histogram::request_seconds();
  Histogram inter_token_latency = Histogram::inter_token_seconds();
  Histogram queue_time = Histogram::request_seconds();
  Histogram e2e_latency = Histogram::request_seconds();
  // Every forward pass: its mean (sum / count) is what the live view's bench compares with
  // and without viewers.
  Histogram step_duration = Histogram::step_seconds();
  // Stopped admitting (a shutdown under way, running requests in their grace): /health answers
  // 503 so that a load balancer sends new requests elsewhere while these finish. Filled in from
  // the loop's admitting flag when a snapshot is taken.
  bool draining = false;
  int64_t requests_running = 0;
  int64_t requests_waiting = 0;
  double kv_usage_ratio = 0;          // blocks in use by live requests / pool size
  double max_decode_gap_seconds = 0;  // worst inter-token gap of any stream since start
  double max_queue_wait_ms = 0;       // /metrics exports it in seconds, /status in ms
  uint64_t prompt_tokens_total = 0;
  uint64_t generation_tokens_total = 0;
  uint64_t prefix_cache_queries_total = 0;
  uint64_t prefix_cache_hits_total = 0;
  uint64_t prefix_cache_reused_tokens_total = 0;
  uint64_t decode_rows_total = 0;
  uint64_t prefill_tokens_total = 0;
  std::map<std::string, uint64_t> requests_total;  // by status: ok, cancelled, failed, rejected
  std::map<std::string, uint64_t> steps_total;     // by kind: decode, prefill, mixed
  // Longest step of each kind since start: a stream in every step never waits longer than the
  // longest step, so benchmarks compare its worst gap with this.
  std::map<std::string, double> max_step_seconds;
  // Speculation (--speculate): tokens proposed and confirmed, and the steps that verified
  // drafts; tokens per verify = (accepted + verify steps) / verify steps.
  uint64_t spec_drafted_tokens_total = 0;
  uint64_t spec_accepted_tokens_total = 0;
  uint64_t spec_verify_rows_total = 0;  // decode rows that carried drafts
  // Per request that drafted, at its end: the share of its drafted tokens confirmed; per
  // verify row: the tokens it produced (1 + the drafts kept).
  Histogram spec_request_acceptance = Histogram::fractions();
  Histogram spec_tokens_per_verify = Histogram::counts_to(9);
  int64_t kv_blocks_total = 0;
  int64_t kv_block_tokens = 0;      // positions per block
  int64_t kv_blocks_used = 0;       // pinned by live requests
  int64_t kv_blocks_cached = 0;     // free but holding a reusable prefix
  uint64_t kv_evictions_total = 0;  // cached blocks dropped to make room
  // Recurrent-state checkpoints of a hybrid model (all zero for other models, or with none).
  int64_t state_checkpoint_slots = 0;  // what --state-ram-mb holds
  int64_t state_checkpoints = 0;       // slots holding a checkpoint
  int64_t state_checkpoint_bytes = 0;
  uint64_t state_checkpoints_taken_total = 0;
  uint64_t state_restores_total = 0;  // requests that started from a checkpoint
  uint64_t state_checkpoint_evictions_total = 0;
  int64_t parked_requests = 0;
  uint64_t kv_preemptions_total = 0;       // parked because decode rows needed blocks
  uint64_t prefill_preemptions_total = 0;  // parked so a short request could take the slot
  uint64_t prefill_resumes_total = 0;      // parked requests that took a slot again
  // The KV disk tier (all zero when it is off).
  bool kv_disk_enabled = false;
  int64_t kv_disk_bytes = 0;
  int64_t kv_disk_budget_bytes = 0;
  int64_t kv_disk_files = 0;
  int64_t kv_disk_foreign_files = 0;
  int64_t kv_disk_blocks = 0;
  int64_t loading_requests = 0;
  uint64_t kv_disk_hits_total = 0;    // admissions that found part of their prefix on disk
  uint64_t kv_disk_misses_total = 0;  // admissions that looked and found none
  uint64_t kv_disk_saves_total = 0;   // segments written
  uint64_t kv_disk_loads_total = 0;   // loads completed
  uint64_t kv_disk_loaded_tokens_total = 0;
  uint64_t kv_disk_saved_blocks_total = 0;
  uint64_t kv_disk_evicted_files_total = 0;
  std::map<std::string, uint64_t> kv_disk_errors_total;  // by kind
  Histogram kv_disk_load_seconds = Histogram::request_seconds();
  Histogram kv_disk_save_seconds = Histogram::request_seconds();
  // Time the engine loop spent on the disk tier (index lookups, queueing, completions); it never
  // waits for the disk itself, so this stays near zero.
  double step_io_wait_seconds = 0;
  // Requests that named their session, by whether this replica had served the session before.
  // Filled in from the loop's session table when a snapshot is taken.
  AffinityTotals affinity;
};

// Seconds a request refused at the queue limit should wait before it asks again: about the time
// until a running request finishes and the queue moves up one place, from the mean time finished
// requests spent past the queue (1 before any has finished), within 1..60.
int32_t retry_after_queue_full_s(const Metrics& m, int32_t parallel);

}  // namespace baton::sched
