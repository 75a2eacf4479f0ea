#pragma once
// The scheduling policy: a pure function from a snapshot of the loop's state to the next step.
// It never calls the engine and keeps no state, so every rule is testable without threads.
//
// Rules (docs/ARCHITECTURE.md, invariants 1 and 2):
// - every active generation gets a decode row in every step, except one paused by its own
//   client's backpressure;
// - prefill budget Q = prefill_chunk when nobody decodes, mixed_prefill_chunk when somebody
//   does (a prompt that completes in this step while a longer one waits counts as somebody:
//   see starting_generation_quantum), or (itl_target_ms > 0 and costs measured) the most tokens
//   that the measured cost model (sched/cost_model.h: attention by depth included) says keep a
//   mixed step within the target, at least kMinTargetQuantum;
// - Q is shared shortest-remaining-first, except that a request starved for aging_steps steps
//   goes first (oldest first), so a short prompt waits at most one step and nobody forever;
// - queued requests are admitted in arrival order, parked ones first, while a slot is free and
//   what they need now (prompt + a block of decode headroom) fits; the head blocks the rest (no
//   overtaking, so big requests are not starved);
// - prefill preemption (see plan_preemption): when no slot is free and the head of the queue is
//   a new request with less work than the longest running prefill has left, that prefill is
//   parked at this boundary and the head takes its slot; and a parked request that has waited
//   max_wait_ms in total takes the slot of the newest running request that arrived after it.
#include <cstdint>
#include <vector>

#include "sched/cost_model.h"

namespace baton::sched {

struct PolicyInput {
  struct Decoder {
    uint64_t id = 0;
    bool paused = false;  // its client's channel is full
    uint64_t seq = 0;     // arrival order
    int32_t held_blocks = 0;
    int32_t committed = 0;  // blocks counted against unreserved_blocks for it
    bool may_park = false;  // see Prefiller::may_park
    int32_t n_kv = 0;       // positions in KV: its row attends to n_kv + 1 keys
  };
  struct Prefiller {
    uint64_t id = 0;
    uint64_t seq = 0;           // arrival order
    int32_t remaining = 0;      // prompt tokens still to compute
    int32_t n_kv = 0;           // positions already in KV (computed or reused)
    int32_t held_blocks = 0;    // blocks in its table
    int32_t starved_steps = 0;  // consecutive steps it got no tokens
    bool may_park = false;      // under --preempt-max-per-request and --preempt-max-wait-s
    int32_t committed = 0;      // blocks counted against unreserved_blocks for it
  };
  struct Waiting {
    uint64_t id = 0;
    uint64_t seq = 0;
    int32_t prompt_tokens = 0;
    int32_t reusable = 0;        // what a prefix lookup would reuse now
    int32_t reserve_blocks = 0;  // blocks it needs now (beyond blocks it kept while parked)
    bool parked = false;
    double parked_ms = 0;  // in total, this park included
  };
  std::vector<Decoder> decoders;
  std::vector<Prefiller> prefilling;
  std::vector<Waiting> waiting;  // arrival order
  int32_t free_slots = 0;
  int32_t free_blocks = 0;  // allocatable now, after the decode rows took theirs
  // Pool size minus what running requests need now (their blocks, or prompt + headroom when
  // more) and the blocks parked requests keep pinned.
  int32_t unreserved_blocks = 0;
  int32_t block_size = 16;
  int32_t prefill_chunk = 2048;
  int32_t mixed_prefill_chunk = 128;
  double itl_target_ms = 0;
  double max_step_ms = 0;  // 0 = off: otherwise every quantum keeps the step within it
  int32_t aging_steps = 8;
  CostModel costs;
  // Prefill preemption (all gates described in SchedConfig).
  bool prefill_preempt = false;
  int32_t preempt_min_tokens = 0;
  double preempt_max_wait_ms = 0;  // 0 = a parked request never forces its way back
  int32_t park_budget_blocks = 0;  // blocks parked requests may still keep pinned
  // Running requests in admission order (the newest is parked first).
  std::vector<uint64_t> admission_order;
};

struct PrefillChunk {
  uint64_t id = 0;
  int32_t n_tokens = 0;
};

struct Park {
  uint64_t id = 0;
  const char* why = "";      // "prefill_preempt" or "max_wait"
  bool keep_blocks = false;  // pinned (within the park budget) or released to the prefix cache
};

struct StepPlan {
  std::vector<Park> park;             // leave their slot at this boundary, before anything runs
  std::vector<uint64_t> decode;       // decode rows, in decoder order
  std::vector<PrefillChunk> prefill;  // in service order
  std::vector<uint64_t> admit;        // queued requests that take a slot now (arrival order)
  int32_t quantum = 0;                // the prefill budget Q of this step
  bool empty() const { return decode.empty() && prefill.empty(); }
};

inline constexpr int32_t kMinQuantum = 16;
// The floor under a latency target. A prefill token costs a small multiple of a decode row's
// share of a step (compute, where the row is memory-bound), so at depth a target of a few decode
// steps may hold fewer than kMinQuantum tokens; a smaller chunk keeps the target, and the prompt
// still advances.
inline constexpr int32_t kMinTargetQuantum = 4;

// Q for this step (see the rules above).
int32_t prefill_quantum(const PolicyInput& in);
// Q when nobody decodes yet but some prompt (of `candidates`) completes within the mixed quantum
// while a longer one waits: that request is about to generate, so the step is sized like a
// mixed step (its remainder + the mixed quantum, at most the idle quantum). Otherwise
// prefill_quantum(in).
int32_t starting_generation_quantum(const PolicyInput& in,
                                    const std::vector<PolicyInput::Prefiller>& candidates);
// The parks of this step; removes the parked from `in` and gives their slots (and, when dropped,
// their blocks) to the queue.
std::vector<Park> plan_preemption(PolicyInput& in);
StepPlan plan_step(const PolicyInput& in);

}  // namespace baton::sched
