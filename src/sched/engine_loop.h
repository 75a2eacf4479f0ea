#pragma once
// The public face of the scheduler: the server submits requests and reads their events; one
// engine-loop thread composes every step (see docs/ARCHITECTURE.md).
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/engine.h"
#include "engine/sampling_params.h"
#include "sched/metrics.h"
#include "sched/sched_config.h"

namespace baton::sched {

enum class RequestState { Queued, Prefilling, Decoding, Finished, Cancelled, Failed };
const char* state_name(RequestState s);

enum class FinishReason { Stop, Length, Cancelled, Failed, Shutdown };
const char* finish_reason_name(FinishReason r);

struct GenerateRequest {
  std::vector<int32_t> prompt;
  int32_t max_tokens = 16;
  engine::SamplingParams sampling;
  bool ignore_eos = false;
};

struct TokenEvent {
  int32_t token = -1;
  float logprob = 0;                           // when sampling.logprobs
  std::vector<std::pair<int32_t, float>> top;  // sampling.top_logprobs alternatives
};

struct RequestStats {
  int32_t prompt_tokens = 0;
  int32_t cached_tokens = 0;  // prompt tokens reused from the prefix cache
  int32_t generated_tokens = 0;
  double queue_ms = 0;
  double time_to_first_token_ms = 0;
  double total_ms = 0;
  int32_t prefill_chunks = 0;
};

struct Event {
  enum class Kind { Token, Finished } kind = Kind::Token;
  TokenEvent token;                          // Kind::Token
  FinishReason reason = FinishReason::Stop;  // Kind::Finished
  std::string error;                         // for Failed
  RequestStats stats;                        // Kind::Finished
};

class RequestHandle {
 public:
  virtual ~RequestHandle() = default;
  virtual uint64_t id() const = 0;
  // Waits up to `timeout` for the next event; false on timeout. After a Finished event there
  // are no more.
  virtual bool next(Event& out, std::chrono::milliseconds timeout) = 0;
  // Idempotent; the loop drops the request at the next step boundary and frees what it held.
  virtual void cancel() = 0;
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
  double ms_waited = 0;  // since arrival
};

struct StatusSnapshot {
  SchedConfig config;
  std::vector<RequestStatus> requests;  // running and waiting, in arrival order
  Metrics metrics;
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

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace baton::sched
