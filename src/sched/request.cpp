#include "sched/request.h"

#include "util/log.h"

namespace baton::sched {

double ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

const char* state_name(RequestState s) {
  switch (s) {
    case RequestState::Queued:
      return "queued";
    case RequestState::Loading:
      return "loading";
    case RequestState::Prefilling:
      return "prefilling";
    case RequestState::Decoding:
      return "decoding";
    case RequestState::Parked:
      return "parked";
    case RequestState::Finished:
      return "finished";
    case RequestState::Cancelled:
      return "cancelled";
    case RequestState::Failed:
      return "failed";
  }
  return "unknown";
}

const char* finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::Stop:
      return "stop";
    case FinishReason::Length:
      return "length";
    case FinishReason::Cancelled:
      return "cancelled";
    case FinishReason::Failed:
      return "failed";
    case FinishReason::Shutdown:
      return "shutdown";
  }
  return "unknown";
}

bool Channel::next(Event& out, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  // A zero timeout is the listener-driven poll: skip the condition variable, whose timed wait
  // would still enter the kernel with an already expired deadline.
  const auto ready = [&] { return !queue_.empty(); };
  if (!ready() && (timeout.count() <= 0 || !cv_.wait_for(lock, timeout, ready))) return false;
  out = std::move(queue_.front());
  queue_.pop_front();
  return true;
}

bool Channel::full() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size() >= capacity_;
}

size_t Channel::room() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size() >= capacity_ ? 0 : capacity_ - queue_.size();
}

bool Channel::try_push_token(TokenEvent ev) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.size() >= capacity_) return false;
    Event e;
    e.kind = Event::Kind::Token;
    e.token = std::move(ev);
    queue_.push_back(std::move(e));
  }
  notify();
  return true;
}

void Channel::push_final(Event ev) {
  ev.kind = Event::Kind::Finished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(ev));
  }
  notify();
}

void Channel::notify() {
  cv_.notify_all();
  std::lock_guard<std::mutex> lock(listener_mu_);
  if (!listener_) return;
  // This runs on the engine loop's thread: a throwing listener must not take the loop down.
  try {
    listener_();
  } catch (const std::exception& e) {
    log::warn("req={} event listener threw: {}", id_, e.what());
  }
}

void Channel::set_listener(std::function<void()> on_event) {
  std::lock_guard<std::mutex> lock(listener_mu_);
  listener_ = std::move(on_event);
  if (!listener_) return;
  bool pending;
  {
    std::lock_guard<std::mutex> queue_lock(mu_);
    pending = !queue_.empty();
  }
  // Events pushed before the listener existed would otherwise never wake anybody.
  if (pending) listener_();
}

RequestStats Request::stats(Clock::time_point now) const {
  RequestStats s;
  s.prompt_tokens = n_prompt;
  s.cached_tokens = cached_tokens;
  s.generated_tokens = generated;
  bool was_admitted = admitted.time_since_epoch().count() != 0;
  s.queue_ms = ms_between(arrival, was_admitted ? admitted : now);
  if (first_token.time_since_epoch().count() != 0) {
    s.time_to_first_token_ms = ms_between(arrival, first_token);
  }
  s.total_ms = ms_between(arrival, now);
  s.prefill_chunks = static_cast<int32_t>(prefill_chunks.size());
  s.parks = parks;
  return s;
}

}  // namespace baton::sched
