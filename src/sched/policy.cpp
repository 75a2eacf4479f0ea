#include "sched/policy.h"

#include <algorithm>
#include <cmath>

namespace baton::sched {

namespace {

constexpr double kEwmaAlpha = 0.2;

double ewma(double old, double sample) {
  return old > 0 ? old + kEwmaAlpha * (sample - old) : sample;
}

int32_t ceil_div(int64_t a, int64_t b) {
  return static_cast<int32_t>((a + b - 1) / b);
}

// Most tokens (up to `want`) a request can take with `free` blocks to spare.
int32_t fit_blocks(int32_t want, int32_t n_kv, int32_t held, int32_t free, int32_t bs) {
  int64_t capacity = static_cast<int64_t>(held + free) * bs - n_kv;
  return static_cast<int32_t>(std::clamp<int64_t>(capacity, 0, want));
}

}  // namespace

void CostModel::observe(int32_t decode_rows, int32_t prefill_tokens, double ms) {
  if (ms <= 0) return;
  if (prefill_tokens == 0 && decode_rows > 0) {
    ms_per_decode_row = ewma(ms_per_decode_row, ms / decode_rows);
  } else if (prefill_tokens > 0) {
    double decode_part = ms_per_decode_row * decode_rows;
    double rest = std::max(ms - decode_part, ms * 0.1);
    ms_per_prefill_token = ewma(ms_per_prefill_token, rest / prefill_tokens);
  }
}

int32_t prefill_quantum(const PolicyInput& in) {
  if (in.decoders.empty()) return std::max(1, in.prefill_chunk);
  if (in.itl_target_ms <= 0 || !in.costs.measured()) return std::max(1, in.mixed_prefill_chunk);
  int32_t rows = 0;
  for (const auto& d : in.decoders) rows += d.paused ? 0 : 1;
  double left_ms = in.itl_target_ms - rows * in.costs.ms_per_decode_row;
  double tokens = std::floor(left_ms / in.costs.ms_per_prefill_token);
  double hi = std::max(in.prefill_chunk, kMinQuantum);
  return static_cast<int32_t>(std::clamp(tokens, static_cast<double>(kMinQuantum), hi));
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

StepPlan plan_step(const PolicyInput& in) {
  StepPlan plan;
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
