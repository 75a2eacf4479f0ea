#include "bench/scenario_runner.h"

#include <algorithm>

#include "bench/prompt_text.h"

namespace baton::bench {

RunContext::RunContext(const Endpoint& ep, const ScenarioOptions& opt, std::string scenario,
                       Clock::time_point deadline)
    : ep_(ep), opt_(opt), scenario_(std::move(scenario)), t0_(Clock::now()), deadline_(deadline) {}

double RunContext::knob_f(const std::string& name) {
  double v = 0;
  if (auto it = opt_.knobs.find(name); it != opt_.knobs.end()) {
    v = it->second;
  } else {
    for (const auto& k : knobs()) {
      if (k.name != name) continue;
      if (auto d = k.defaults.find(scenario_); d != k.defaults.end()) v = d->second;
    }
  }
  used_[name] = v;
  return v;
}

long RunContext::knob(const std::string& name) {
  return std::max(0L, static_cast<long>(knob_f(name)));
}

StreamRequest RunContext::base_request(std::string label, long max_tokens) const {
  StreamRequest r;
  r.label = std::move(label);
  r.model = opt_.model;
  r.max_tokens = std::max(1L, max_tokens);
  r.timeout_s = opt_.timeout_s;
  return r;
}

StreamRequest RunContext::completion(std::string label, long prompt_tokens, long max_tokens,
                                     std::uint64_t salt) const {
  StreamRequest r = base_request(std::move(label), max_tokens);
  r.prompt = make_prompt(prompt_tokens, opt_.prompt_unit, opt_.seed * 1000003ULL + salt);
  r.prompt_tokens_requested = prompt_tokens;
  return r;
}

void RunContext::sleep_until_ms(double ms) const {
  auto when = t0_ + std::chrono::microseconds(static_cast<long>(ms * 1000));
  std::this_thread::sleep_until(std::min(when, deadline_));
}

InFlight::InFlight(const RunContext& ctx, StreamRequest req)
    : progress_(std::make_unique<Progress>()) {
  thread_ = std::thread(
      [this, ep = ctx.endpoint(), req = std::move(req), t0 = ctx.t0(), dl = ctx.deadline()] {
        rec_ = stream_request(ep, req, t0, dl, progress_.get());
      });
}

InFlight::~InFlight() {
  if (thread_.joinable()) thread_.join();
}

bool InFlight::wait_tokens(long n, Clock::time_point deadline) const {
  while (tokens() < n) {
    if (finished() || Clock::now() >= deadline) return tokens() >= n;
    std::this_thread::sleep_for(std::chrono::microseconds(500));
  }
  return true;
}

double InFlight::sent_ms(Clock::time_point deadline) const {
  while (progress_->send_ms.load() < 0 && !finished() && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return progress_->send_ms.load();
}

RequestRecord InFlight::join() {
  if (thread_.joinable()) thread_.join();
  return rec_;
}

std::vector<RequestRecord> join_all(std::vector<std::unique_ptr<InFlight>>& flights) {
  std::vector<RequestRecord> out;
  for (auto& f : flights) out.push_back(f->join());
  return out;
}

}  // namespace baton::bench
