#pragma once
// The public face of the scheduler: the server submits requests and reads their events; one
// engine-loop thread composes every step (see docs/ARCHITECTURE.md).
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "engine/sampling_params.h"
#include "engine/token_constraint.h"
#include "sched/live_feed.h"
#include "sched/metrics.h"
#include "sched/sched_config.h"

namespace baton::sched {

// Parked: out of its slot at a step boundary (KV pressure or prefill preemption), waiting to
// resume ahead of new arrivals; it keeps its tokens and sampler, so it resumes bit-exactly.
// Loading: admitted, its prefix being read from the KV disk tier while other requests step.
enum class RequestState {
  Queued,
  Loading,
  Prefilling,
  Decoding,
  Parked,
  Finished,
  Cancelled,
  Failed
};
const char* state_name(RequestState s);

enum class FinishReason { Stop, Length, Cancelled, Failed, Shutdown };
const char* finish_reason_name(FinishReason r);

// Decodes a request's tokens into its client text and decides, token by token, that
// generation is complete (the server's stop strings): the one place where the text is made and
// matched. The loop calls it on its own thread, in token order, for every token it sends (EOG
// excluded), before the token's event is queued, so the event carries the text and the request
// ends in the step that produced the deciding token instead of running on while a cancel
// travels back from the client's thread. It is never called concurrently.
class StopCondition {
 public:
  virtual ~StopCondition() = default;
  // True ends the request with FinishReason::Stop right after this token's event. `text`
  // receives what the token adds to the client's text (held back while it may still become a
  // stop string).
  virtual bool on_token(int32_t token, std::string& text) = 0;
  // At the request's end, whatever the reason: the text still held back (none after a stop).
  virtual std::string held_text() = 0;
  // The stop string that ended the request; empty when none did.
  virtual std::string matched_stop() const = 0;
};

using engine::TokenConstraint;  // structured output (engine/token_constraint.h)

struct GenerateRequest {
  std::vector<int32_t> prompt;
  int32_t max_tokens = 16;
  engine::SamplingParams sampling;
  bool ignore_eos = false;
  std::shared_ptr<StopCondition> stop;          // optional: without it, events carry no text
  std::shared_ptr<TokenConstraint> constraint;  // optional
  std::string session;  // the client's conversation id, for per-session cache figures; optional
};

struct TokenEvent {
  int32_t token = -1;
  float logprob = 0;                           // when sampling.logprobs
  std::vector<std::pair<int32_t, float>> top;  // sampling.top_logprobs alternatives
  std::string text;                            // the request's StopCondition's text for it
};

struct RequestStats {
  int32_t prompt_tokens = 0;
  int32_t cached_tokens = 0;  // prompt tokens reused from the prefix cache
  int32_t generated_tokens = 0;
  double queue_ms = 0;
  double time_to_first_token_ms = 0;
  double total_ms = 0;
  int32_t prefill_chunks = 0;
  int32_t parks = 0;  // times it left its slot and resumed (or ended while parked)
};

struct Event {
  enum class Kind { Token, Finished } kind = Kind::Token;
  TokenEvent token;                          // Kind::Token
  FinishReason reason = FinishReason::Stop;  // Kind::Finished
  std::string error;                         // for Failed
  // Failed because of what the request itself asked (its constraint went over its work
  // budget): a client error, not the server's.
  bool request_fault = false;
  RequestStats stats;  // Kind::Finished
  // Kind::Finished, from the request's StopCondition: the text it held back, and the stop string
  // that ended the request (empty when none did).
  std::string text;
  std::string stop_sequence;
};

// Fills a request's final event from its stop condition (both loops end requests this way).
// The condition is server code: if it throws here, the event goes out without its text.
inline void close_stop_condition(StopCondition* c, Event& final_event) noexcept {
  if (c == nullptr) return;
  try {
    // The held text's last bytes may complete a stop string: ask which matched after them.
    final_event.text = c->held_text();
    final_event.stop_sequence = c->matched_stop();
  } catch (...) {
    final_event.text.clear();
  }
}

class RequestHandle {
 public:
  virtual ~RequestHandle() = default;
  virtual uint64_t id() const = 0;
  // Waits up to `timeout` for the next event; false on timeout. After a Finished event there
  // are no more.
  virtual bool next(Event& out, std::chrono::milliseconds timeout) = 0;
  // Idempotent; the loop drops the request at the next step boundary and frees what it held.
  virtual void cancel() = 0;
  // `on_event` runs after every event is queued (token or final), on the pushing thread (the
  // engine loop), so an asynchronous consumer can be woken instead of blocking in next(); it
  // should only signal and then read with next(ev, 0ms). When events are already queued it runs
  // once before set_listener returns. An empty function removes it. Once set_listener returns,
  // the previous listener is neither running nor called again, so its captures may be freed;
  // the flip side is that a listener must not call set_listener, nor wait for a lock held
  // around a set_listener call. An exception from it is logged and dropped.
  virtual void set_listener(std::function<void()> on_event) = 0;
  virtual RequestState state() const = 0;
};

class SubmitError : public std::runtime_error {
 public:
  enum class Code { QueueFull, TooLong, ShuttingDown, Invalid };
  SubmitError(Code c, const std::string& msg) : std::runtime_error(msg), code(c) {}
  Code code;
};

struct RequestStatus {
  uint64_t id = 0;
  RequestState state = RequestState::Queued;
  int32_t prompt_tokens = 0;
  int32_t prompt_done = 0;  // prefilled (including cached)
  int32_t cached_tokens = 0;
  int32_t generated = 0;
  double ms_waited = 0;         // since arrival
  double ttft_ms = 0;           // arrival to first token; 0 before it
  double max_gap_ms = 0;        // longest inter-token gap so far
  double tokens_per_s = 0;      // generated tokens after the first, per second since it
  int32_t disk_tokens = 0;      // prompt positions loaded from the KV disk tier
  int64_t drafted_tokens = 0;   // --speculate: tokens drafted for it so far
  int64_t accepted_tokens = 0;  // and confirmed
  // Parked requests only.
  std::string parked_why;  // "kv_pressure" or "prefill_preempt"
  double ms_parked = 0;    // this time
  int32_t position = 0;    // positions it had computed when parked
  int32_t blocks_kept = 0;
  int32_t parks = 0;  // times parked so far
};

struct StatusSnapshot {
  SchedConfig config;
  std::vector<RequestStatus> requests;  // running and waiting, in arrival order
  Metrics metrics;
  std::vector<SessionFigures> sessions;  // the most recently seen, most recent first
};

class EngineLoop {
 public:
  EngineLoop(engine::Engine& engine, SchedConfig config);
  ~EngineLoop();  // shuts down if still running
  EngineLoop(const EngineLoop&) = delete;
  EngineLoop& operator=(const EngineLoop&) = delete;

  void start();
  // Thread-safe. Throws SubmitError (queue full, prompt + max_tokens over --ctx, shutting down).
  std::shared_ptr<RequestHandle> submit(GenerateRequest req);
  // Stops admitting, lets running requests finish for the grace period, cancels the rest and
  // joins the loop thread. Idempotent.
  void shutdown();
  Metrics metrics() const;
  StatusSnapshot status() const;
  const SchedConfig& config() const;
  // Thread-safe: shutdown() has begun (new requests are refused).
  bool draining() const;
  // Thread-safe: the step history live viewers read (sched/live_feed.h).
  std::shared_ptr<const LiveFeed> live() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace baton::sched
