#pragma once
// One request inside the engine loop, and its output channel to the client.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "engine/sampler.h"
#include "sched/engine_loop.h"

namespace baton::sched {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point a, Clock::time_point b);

inline bool ended(RequestState s) {
  return s == RequestState::Finished || s == RequestState::Cancelled || s == RequestState::Failed;
}

// The bounded per-request queue of events (the RequestHandle the server holds). The loop never
// blocks on it: try_push refuses a token when the queue is full, and the loop pauses that
// request (and fails it after send_stall_timeout_ms).
class Channel : public RequestHandle {
 public:
  Channel(uint64_t id, size_t capacity) : id_(id), capacity_(capacity < 1 ? 1 : capacity) {}

  uint64_t id() const override { return id_; }
  bool next(Event& out, std::chrono::milliseconds timeout) override;
  void cancel() override { cancel_requested_.store(true); }
  RequestState state() const override { return state_.load(); }
  void set_listener(std::function<void()> on_event) override;

  // Loop side.
  bool cancel_requested() const { return cancel_requested_.load(); }
  void set_state(RequestState s) { state_.store(s); }
  bool full() const;
  bool try_push_token(TokenEvent ev);  // false when full
  size_t room() const;                 // tokens try_push_token would take now
  void push_final(Event ev);           // always delivered, even past capacity

 private:
  void notify();  // wakes next() and calls the listener; mu_ must not be held

  const uint64_t id_;
  const size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Event> queue_;
  // Held while the listener runs (never together with mu_ held first), so that set_listener
  // can promise the old listener has returned; next() never waits for it.
  std::mutex listener_mu_;
  std::function<void()> listener_;
  std::atomic<bool> cancel_requested_{false};
  std::atomic<RequestState> state_{RequestState::Queued};
};

struct PrefillTiming {
  int32_t n_tokens = 0;
  double ms = 0;
};

// Owned by the loop thread; only the channel is shared with the client.
// Parked sits beside Prefilling and Decoding: a parked request leaves its slot, keeps its
// tokens, sampler (PRNG state), constraint and stop condition, and on resume prefills again up
// to n_fill (reusing whatever of its released blocks the prefix cache still holds), so the
// sequence it produces is the one it would have produced unparked.
struct Request {
  uint64_t id = 0;
  uint64_t seq = 0;  // arrival order
  GenerateRequest params;
  std::shared_ptr<Channel> channel;
  std::unique_ptr<engine::Sampler> sampler;
  RequestState state = RequestState::Queued;

  std::vector<int32_t> tokens;  // prompt, then generated tokens
  int32_t n_prompt = 0;
  // Positions to compute before the next sample: the prompt, or after a park mid-decode the
  // whole sequence so far (the last sampled token's KV was never computed).
  int32_t n_fill = 0;
  int32_t n_kv = 0;  // positions whose KV is in the blocks
  int32_t cached_tokens = 0;
  std::vector<int32_t> block_table;
  int32_t n_named_blocks = 0;  // leading full blocks already committed to the prefix cache
  uint64_t chain_hash = 0;     // hash of block n_named_blocks - 1 (fingerprint at first)
  // Leading blocks already handed to the disk tier (saved, queued, or found there), and the
  // chain hash of the last of them.
  int32_t disk_checked_blocks = 0;
  uint64_t disk_checked_hash = 0;
  std::optional<Clock::time_point> loading_since;
  int32_t loading_full = 0;        // full blocks being loaded
  int32_t loading_tail = 0;        // then positions used of one more block (the partial tail)
  int32_t generated = 0;           // tokens sent (EOG excluded)
  bool failed_by_request = false;  // a Failed finish caused by what the request asked for
  int32_t starved_steps = 0;

  // Speculation: the next draft's length (adapted to how many of the last were right) and
  // what was drafted and accepted so far.
  int32_t draft_length = 0;
  int64_t drafted_tokens = 0;
  int64_t accepted_tokens = 0;

  // Parking.
  int32_t parks = 0;
  const char* park_why = "";
  int32_t parked_position = 0;
  std::optional<Clock::time_point> parked_since;
  double parked_ms_total = 0;  // finished parks; the gate on how long it may be kept out

  Clock::time_point arrival, admitted, first_token, last_token;
  uint64_t last_token_step = 0;  // the live feed's seq of the step that sampled last_token
  double max_gap_ms = 0;         // its longest inter-token gap so far
  int32_t disk_tokens = 0;       // prompt positions loaded from the KV disk tier
  std::vector<PrefillTiming> prefill_chunks;
  std::optional<Clock::time_point> paused_since;  // channel full

  int32_t remaining_prompt() const { return n_fill - n_kv; }
  bool decoding() const { return state == RequestState::Decoding; }
  RequestStats stats(Clock::time_point now) const;
};

}  // namespace baton::sched
