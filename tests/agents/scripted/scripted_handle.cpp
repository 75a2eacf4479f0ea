#include "scripted/scripted_handle.h"

#include <cstdio>
#include <exception>

namespace baton::agents {

bool ScriptedHandle::next(sched::Event& out, std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!cv_.wait_for(lock, timeout, [&] { return !queue_.empty(); })) return false;
  out = std::move(queue_.front());
  queue_.pop_front();
  return true;
}

void ScriptedHandle::set_listener(std::function<void()> on_event) {
  std::lock_guard<std::mutex> guard(listener_mu_);
  listener_ = std::move(on_event);
  bool waiting = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    waiting = !queue_.empty();
  }
  if (waiting) call_listener();
}

sched::RequestState ScriptedHandle::state() const {
  std::lock_guard<std::mutex> lock(mu_);
  return state_;
}

void ScriptedHandle::set_state(sched::RequestState s) {
  std::lock_guard<std::mutex> lock(mu_);
  state_ = s;
}

void ScriptedHandle::push(sched::Event ev) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(ev));
  }
  cv_.notify_all();
  std::lock_guard<std::mutex> guard(listener_mu_);
  call_listener();
}

void ScriptedHandle::call_listener() {
  if (!listener_) return;
  try {
    listener_();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scripted_server: a listener threw: %s\n", e.what());
  }
}

}  // namespace baton::agents
