#include "sched/policy.h"

#include <algorithm>
#include <cmath>

namespace baton::sched {

namespace {

int32_t ceil_div(int64_t a, int64_t b) {
  return static_cast<int32_t>((a + b - 1) / b);
}

// Most tokens (up to `want`) a request can take with `free` blocks to spare.
int32_t fit_blocks(int32_t want, int32_t n_kv, int32_t held, int32_t free, int32_t bs) {
  int64_t capacity = static_cast<int64_t>(held + free) * bs - n_kv;
  return static_cast<int32_t>(std::clamp<int64_t>(capacity, 0, want));
}

struct Removed {
  bool found = false;
  bool may_park = false;
  uint64_t seq = 0;
  int32_t held = 0;
  int32_t committed = 0;
  int32_t n_kv = 0;
};

Removed find_running(const PolicyInput& in, uint64_t id) {
  for (const auto& d : in.decoders) {
    if (d.id == id) return {true, d.may_park, d.seq, d.held_blocks, d.committed, 0};
  }
  for (const auto& p : in.prefilling) {
    if (p.id == id) return {true, p.may_park, p.seq, p.held_blocks, p.committed, p.n_kv};
  }
  return {};
}

// Takes `id` out of the running lists and gives its slot to the queue. Its blocks stay pinned
// when the park budget allows and the head of the queue (needing `need` blocks) fits without
// them; otherwise they go back to the prefix cache.
Park park_running(PolicyInput& in, uint64_t id, const char* why, int32_t need) {
  const Removed r = find_running(in, id);
  std::erase_if(in.decoders, [id](const auto& d) { return d.id == id; });
  std::erase_if(in.prefilling, [id](const auto& p) { return p.id == id; });
  std::erase(in.admission_order, id);
  ++in.free_slots;
  Park park{id, why, false};
  if (r.held > 0 && r.held <= in.park_budget_blocks &&
      need <= in.unreserved_blocks + r.committed - r.held) {
    park.keep_blocks = true;
    in.unreserved_blocks += r.committed - r.held;
    in.park_budget_blocks -= r.held;
  } else {
    in.unreserved_blocks += r.committed;
    in.free_blocks += r.held;
  }
  return park;
}

}  // namespace

std::vector<Park> plan_preemption(PolicyInput& in) {
  std::vector<Park> parks;
  if (in.free_slots > 0 || in.waiting.empty()) return parks;
  const auto& w = in.waiting.front();
  if (w.parked) {
    // Kept out too long: the newest running request that arrived after it gives way.
    if (in.preempt_max_wait_ms <= 0 || w.parked_ms < in.preempt_max_wait_ms) return parks;
    for (auto it = in.admission_order.rbegin(); it != in.admission_order.rend(); ++it) {
      const Removed r = find_running(in, *it);
      if (!r.found || !r.may_park || r.seq < w.seq) continue;
      if (w.reserve_blocks > in.unreserved_blocks + r.committed) continue;
      parks.push_back(park_running(in, *it, "max_wait", w.reserve_blocks));
      break;
    }
    return parks;
  }
  if (!in.prefill_preempt) return parks;
  const int32_t work = w.prompt_tokens - w.reusable;
  const PolicyInput::Prefiller* victim = nullptr;
  for (const auto& p : in.prefilling) {
    if (!p.may_park || p.n_kv < in.preempt_min_tokens || p.remaining <= work) continue;
    if (w.reserve_blocks > in.unreserved_blocks + p.committed) continue;  // would not help
    if (!victim || p.remaining > victim->remaining) victim = &p;
  }
  if (victim) parks.push_back(park_running(in, victim->id, "prefill_preempt", w.reserve_blocks));
  return parks;
}

namespace {

// The step's work besides its prefill chunk: every decode row that is not paused.
StepShape decode_shape(const PolicyInput& in) {
  StepShape s;
  for (const auto& d : in.decoders) {
    if (!d.paused) s.add_decode(d.n_kv);
  }
  return s;
}

// The deepest running prefill: the chunk is costed as if it continued that one, so a step
// never runs over because the chunk went to the request with the most context.
int32_t deepest_prefill(const PolicyInput& in) {
  int32_t depth = 0;
  for (const auto& p : in.prefilling) {
    if (p.remaining > 0) depth = std::max(depth, p.n_kv);
  }
  return depth;
}

int32_t mixed_or_idle_quantum(const PolicyInput& in) {
  if (in.decoders.empty()) return std::max(1, in.prefill_chunk);
  if (in.itl_target_ms <= 0 || !in.costs.measured()) return std::max(1, in.mixed_prefill_chunk);
  return in.costs.largest_chunk(decode_shape(in), deepest_prefill(in), in.itl_target_ms,
                                kMinTargetQuantum, std::max(in.prefill_chunk, kMinTargetQuantum));
}

// The quantum of the first steps under max_step_ms, before any cost is measured.
constexpr int32_t kProbeQuantum = 128;

// A step that runs past max_step_ms holds back every request that arrives during it, so the
// quantum is cut to what the measured costs say fits (never below kMinQuantum, so a slow
// machine still makes progress).
int32_t cap_to_step_time(const PolicyInput& in, int32_t q) {
  if (in.max_step_ms <= 0 || q <= kMinQuantum) return q;
  // Nothing measured yet: a first full chunk could take tens of seconds, so probe with a small
  // one; its cost sizes the next.
  if (in.costs.ms_per_prefill_token <= 0) return std::min(q, kProbeQuantum);
  return in.costs.largest_chunk(decode_shape(in), deepest_prefill(in), in.max_step_ms, kMinQuantum,
                                q);
}

}  // namespace

int32_t prefill_quantum(const PolicyInput& in) {
  return cap_to_step_time(in, mixed_or_idle_quantum(in));
}

int32_t starting_generation_quantum(const PolicyInput& in,
                                    const std::vector<PolicyInput::Prefiller>& candidates) {
  const int32_t q = prefill_quantum(in);
  if (!in.decoders.empty()) return q;
  // A prompt that completes within the mixed quantum is about to generate. Such a step is sized
  // like a mixed one (its whole remainder plus the mixed quantum for the rest), so a short
  // request that arrived during a long prefill is not held behind a full idle quantum.
  const int32_t mixed = std::max(1, in.mixed_prefill_chunk);
  int64_t starting = 0;
  bool longer_waits = false;
  for (const auto& c : candidates) {
    if (c.remaining <= 0) continue;
    if (c.remaining <= mixed) {
      starting += c.remaining;
    } else {
      longer_waits = true;
    }
  }
  if (starting == 0 || !longer_waits) return q;
  return static_cast<int32_t>(std::min<int64_t>(q, starting + mixed));
}

StepPlan plan_step(const PolicyInput& input) {
  StepPlan plan;
  PolicyInput in = input;
  plan.park = plan_preemption(in);
  for (const auto& d : in.decoders) {
    if (!d.paused) plan.decode.push_back(d.id);
  }

  // Admissions: arrival order, a free slot and a reservation that fits; the head blocks the rest.
  std::vector<PolicyInput::Prefiller> candidates = in.prefilling;
  int32_t slots = in.free_slots;
  int32_t unreserved = in.unreserved_blocks;
  for (const auto& w : in.waiting) {
    if (slots <= 0 || w.reserve_blocks > unreserved) break;
    plan.admit.push_back(w.id);
    --slots;
    unreserved -= w.reserve_blocks;
    // Reused full blocks are pinned out of the free count, so count them as needed (held = 0).
    candidates.push_back({w.id, w.seq, w.prompt_tokens - w.reusable, w.reusable, 0, 0});
  }

  const int32_t aging = std::max(1, in.aging_steps);
  std::stable_sort(candidates.begin(), candidates.end(), [aging](const auto& a, const auto& b) {
    bool aged_a = a.starved_steps >= aging, aged_b = b.starved_steps >= aging;
    if (aged_a != aged_b) return aged_a;
    if (aged_a) return a.seq < b.seq;
    if (a.remaining != b.remaining) return a.remaining < b.remaining;
    return a.seq < b.seq;
  });

  plan.quantum = starting_generation_quantum(in, candidates);
  int32_t budget = plan.quantum;
  int32_t blocks = in.free_blocks;
  const int32_t bs = std::max(1, in.block_size);
  for (const auto& c : candidates) {
    if (budget <= 0) break;
    if (c.remaining <= 0) continue;
    int32_t n = std::min(c.remaining, budget);
    n = fit_blocks(n, c.n_kv, c.held_blocks, blocks, bs);
    if (n <= 0) continue;  // waits in its own state for blocks
    plan.prefill.push_back({c.id, n});
    budget -= n;
    blocks -= std::max(0, ceil_div(c.n_kv + n, bs) - c.held_blocks);
  }
  return plan;
}

}  // namespace baton::sched
