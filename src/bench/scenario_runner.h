#pragma once
// The machinery scenarios are written with: a run context (server, clock, deadline, options)
// and in-flight requests that stream on their own threads while the scenario watches them.
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "bench/openai_client.h"
#include "bench/scenarios.h"

namespace baton::bench {

class RunContext {
 public:
  RunContext(const Endpoint& ep, const ScenarioOptions& opt, std::string scenario,
             Clock::time_point deadline);

  // The user's value for a scenario knob (--long-tokens ...) or the scenario's default; every
  // value used is recorded so the JSON output says exactly what ran.
  long knob(const std::string& name);
  double knob_f(const std::string& name);

  // A streaming completion request of `prompt_tokens` tokens of fresh text (seeded by `salt`).
  StreamRequest completion(std::string label, long prompt_tokens, long max_tokens,
                           std::uint64_t salt) const;
  StreamRequest base_request(std::string label, long max_tokens) const;

  // Sleeps until `ms` after the scenario start, or the deadline, whichever comes first.
  void sleep_until_ms(double ms) const;
  double now_ms() const { return ms_since(t0_); }

  const Endpoint& endpoint() const { return ep_; }
  const ScenarioOptions& options() const { return opt_; }
  Clock::time_point t0() const { return t0_; }
  Clock::time_point deadline() const { return deadline_; }
  const nlohmann::json& used_knobs() const { return used_; }

 private:
  Endpoint ep_;
  ScenarioOptions opt_;
  std::string scenario_;
  Clock::time_point t0_, deadline_;
  nlohmann::json used_ = nlohmann::json::object();
};

// One request streaming on its own thread.
class InFlight {
 public:
  InFlight(const RunContext& ctx, StreamRequest req);
  ~InFlight();
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

  long tokens() const { return progress_->tokens.load(); }
  bool finished() const { return progress_->finished.load(); }
  // Waits until the stream has `n` tokens; false when it ended first or the deadline passed.
  bool wait_tokens(long n, Clock::time_point deadline) const;
  // When the request went out (ms since the scenario start); waits for its thread to send it.
  double sent_ms(Clock::time_point deadline) const;
  RequestRecord join();

 private:
  std::unique_ptr<Progress> progress_;
  RequestRecord rec_;
  std::thread thread_;
};

// Joins all, in order.
std::vector<RequestRecord> join_all(std::vector<std::unique_ptr<InFlight>>& flights);

}  // namespace baton::bench
