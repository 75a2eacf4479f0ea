// The watchdog thread behind RenderDeadline. Lock order everywhere: the GIL, then mu_; the
// watchdog waits on mu_ without the GIL and takes the GIL before it raises anything, so a
// rendering that disarmed (under the GIL) can never be hit afterwards.
#include "chat/render_watchdog.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "chat/python_runtime.h"

namespace baton::chat::detail {
namespace {

using Clock = std::chrono::steady_clock;

class Watchdog {
 public:
  // Lives for the process, like the interpreter: its thread may be waiting at exit.
  static Watchdog& get() {
    static Watchdog* w = new Watchdog;
    return *w;
  }

  uint64_t arm(unsigned long thread, Clock::time_point deadline) {
    std::lock_guard lock(mu_);
    const uint64_t t = next_++;
    entries_[t] = {thread, deadline, false};
    cv_.notify_one();
    return t;
  }

  bool disarm(uint64_t ticket) {
    std::lock_guard lock(mu_);
    auto it = entries_.find(ticket);
    if (it == entries_.end()) return false;
    const bool fired = it->second.fired;
    entries_.erase(it);
    return fired;
  }

  bool fired(uint64_t ticket) {
    std::lock_guard lock(mu_);
    auto it = entries_.find(ticket);
    return it != entries_.end() && it->second.fired;
  }

 private:
  struct Entry {
    unsigned long thread = 0;
    Clock::time_point deadline;
    bool fired = false;
  };

  Watchdog() {
    std::thread([this] { run(); }).detach();
  }

  // The first armed, unfired entry past its deadline, or 0 after waiting for one.
  uint64_t wait_for_expiry() {
    std::unique_lock lock(mu_);
    for (;;) {
      Clock::time_point next = Clock::time_point::max();
      for (const auto& [t, e] : entries_) {
        if (e.fired) continue;
        if (e.deadline <= Clock::now()) return t;
        next = std::min(next, e.deadline);
      }
      if (next == Clock::time_point::max()) {
        cv_.wait(lock);
      } else {
        cv_.wait_until(lock, next);
      }
    }
  }

  void run() {
    for (;;) {
      const uint64_t t = wait_for_expiry();
      PyGILState_STATE gil = PyGILState_Ensure();
      {
        std::lock_guard lock(mu_);
        auto it = entries_.find(t);
        // Still armed while we hold the GIL: the rendering is inside Python, between bytecodes.
        if (it != entries_.end() && !it->second.fired) {
          it->second.fired = true;
          PyThreadState_SetAsyncExc(it->second.thread, timeout_exception());
        }
      }
      PyGILState_Release(gil);
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<uint64_t, Entry> entries_;
  uint64_t next_ = 1;
};

}  // namespace

RenderDeadline::RenderDeadline(std::chrono::milliseconds limit) {
  if (limit.count() <= 0) return;
  thread_ = PyThread_get_thread_ident();
  ticket_ = Watchdog::get().arm(thread_, Clock::now() + limit);
}

RenderDeadline::~RenderDeadline() {
  if (ticket_ == 0) return;
  if (Watchdog::get().disarm(ticket_)) PyThreadState_SetAsyncExc(thread_, nullptr);
}

bool RenderDeadline::fired() const {
  return ticket_ != 0 && Watchdog::get().fired(ticket_);
}

}  // namespace baton::chat::detail
