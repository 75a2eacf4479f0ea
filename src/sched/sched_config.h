#pragma once
#include <cstdint>
#include <string>

namespace baton::sched {

enum class SpeculateMode { Off, Ngram, Suffix };

struct SchedConfig {
  int32_t parallel = 1;               // --parallel / --batched-session: requests running at once
  int32_t max_queue = 256;            // --max-queue: waiting requests beyond `parallel`
  int32_t ctx = 4096;                 // --ctx: most tokens one request may hold
  int32_t prefill_chunk = 2048;       // --prefill-chunk: quantum while nobody decodes
  int32_t mixed_prefill_chunk = 128;  // --mixed-prefill-chunk: quantum while somebody decodes
  // --itl-target-ms: size mixed steps to keep a decoding stream's gap within this (0 = off).
  // `auto` (the server's default) sets itl_target_decode_steps instead, and the loop resolves
  // the target at start to that many decode steps, measured (sched/loop_calibrate.cpp).
  double itl_target_ms = 0;
  double itl_target_decode_steps = 0;
  double max_step_ms = 0;    // --max-step-ms: cap every step's prefill quantum by time; 0 = off
  int64_t kv_ram_mb = 0;     // --kv-ram-mb: 0 = sized from ctx × parallel
  bool prefix_cache = true;  // --no-prefix-cache turns reuse off
  int32_t send_stall_timeout_ms = 30000;  // --send-stall-timeout-ms
  int32_t channel_capacity = 1024;        // tokens buffered per request before it counts as stalled
  double shutdown_grace_s = 10;           // --shutdown-grace-s
  // The pool's blocks: planned at start by the server (sched/memory_plan.h), else resolved by
  // the engine loop from kv_ram_mb (0 = not yet).
  int32_t kv_blocks = 0;
  int32_t aging_steps = 8;  // a prefilling request starved this many steps goes first
  // --prefill-preempt / --no-prefill-preempt: when every slot is taken, a waiting request with
  // less work than the longest running prefill has left parks that prefill and takes its slot.
  bool prefill_preempt = true;
  int32_t preempt_min_tokens = 256;     // --preempt-min-tokens: never park a prefill before this
  int32_t preempt_max_per_request = 4;  // --preempt-max-per-request
  double preempt_max_wait_s =
      30;  // --preempt-max-wait-s: a parked request then forces its way back
  // --kv-disk-dir / --kv-disk-space-mb: the KV disk tier (off when either is unset or 0).
  std::string kv_disk_dir;
  int64_t kv_disk_space_mb = 0;
  int64_t park_ram_mb = 256;  // --park-ram-mb: KV a parked prefill may keep pinned (0 = release)
  // Hybrid models: --state-ram-mb bounds the recurrent-state checkpoints (0 = none, so no
  // prefix reuse); --state-checkpoint-blocks N takes one every N full blocks (0 = auto: 1 while a
  // state costs at most 8 blocks of KV, else state / (8 blocks' KV)), plus one at the end of
  // each prompt's last full block.
  int64_t state_ram_mb = 1024;
  int32_t state_checkpoint_blocks = 0;
  // --speculate off|ngram|suffix and --draft-max: decoding requests propose tokens from an
  // n-gram lookup over their own sequence (suffix: then over recent requests' outputs too, at
  // most --spec-corpus-tokens of them) and check them in the step (lossless: the output is the
  // same bytes as without). Only in steps without prefill work, within the latency target.
  SpeculateMode speculate = SpeculateMode::Off;
  int32_t draft_max = 8;
  int64_t spec_corpus_tokens = 65536;
  // --live-steps: step records the live view (/dashboard, /events) keeps; a viewer that falls
  // further behind loses the oldest. A record is a few hundred bytes.
  int32_t live_steps = 8192;
  // The startup line, e.g. "batched mode: parallel=3 prefill_chunk=2048 ...".
  std::string describe() const;
};

// The blocks of block_size tokens an automatic KV pool wants: every slot a full context, plus a
// quarter more to keep finished prefixes cached.
int32_t auto_kv_blocks(const SchedConfig& c, int32_t block_size);

}  // namespace baton::sched
