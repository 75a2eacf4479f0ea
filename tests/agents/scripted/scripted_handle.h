#pragma once
// A sched::RequestHandle fed by the scripted backend instead of the engine loop: a queue of
// events with the listener contract of engine_loop.h (the listener runs after each push on the
// pushing thread, once at set_listener when events wait, and never again once replaced).
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>

#include "sched/engine_loop.h"

namespace baton::agents {

class ScriptedHandle : public sched::RequestHandle {
 public:
  explicit ScriptedHandle(uint64_t id) : id_(id) {}

  uint64_t id() const override { return id_; }
  bool next(sched::Event& out, std::chrono::milliseconds timeout) override;
  void cancel() override { cancel_requested_ = true; }
  void set_listener(std::function<void()> on_event) override;
  sched::RequestState state() const override;

  // The producer side (the backend's pacing thread).
  void push(sched::Event ev);
  void set_state(sched::RequestState s);
  bool cancel_requested() const { return cancel_requested_; }

 private:
  void call_listener();  // with listener_mu_ held

  const uint64_t id_;
  std::atomic<bool> cancel_requested_{false};
  mutable std::mutex mu_;  // queue and state
  std::condition_variable cv_;
  std::deque<sched::Event> queue_;
  sched::RequestState state_ = sched::RequestState::Queued;
  // Held while the listener runs and while it is replaced, so a replaced listener is never
  // running once set_listener returns. Separate from mu_: the listener reads with next().
  std::mutex listener_mu_;
  std::function<void()> listener_;
};

}  // namespace baton::agents
