#pragma once
// Slow and uneven disks for tests, through DiskTier's delay hooks. random_delay: a seeded delay
// per job. DiskGate: a disk that a test steps by hand; its hooks hold the I/O thread before each
// job until the test lets one go, so jobs finish at moments the test picks (seeded), never at
// moments thread timing picks. A hook kept waiting longer than the gate's patience lets its job
// go and is recorded: a test driving a scheduler on its own thread releases jobs only between
// steps, so only a step that waited for the disk could keep a hook waiting that long.
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "kv/disk_tier.h"

namespace baton::kv::testing {

class DiskGate {
 public:
  explicit DiskGate(std::chrono::seconds patience = std::chrono::seconds(30))
      : s_(std::make_shared<State>()) {
    s_->patience = patience;
  }
  // Opens: a tier outliving the gate never waits on it again.
  ~DiskGate() { open(); }
  DiskGate(const DiskGate&) = delete;
  DiskGate& operator=(const DiskGate&) = delete;

  // Holds every load and save of `tier`.
  void attach(DiskTier& tier) const {
    tier.set_load_delay(hook());
    tier.set_save_delay(hook());
  }
  // A hook for DiskTier::set_load_delay / set_save_delay; it shares the gate's state, so it
  // stays valid after the gate is gone.
  DiskTier::DelayHook hook() const {
    return [s = s_] {
      std::unique_lock<std::mutex> lock(s->mu);
      ++s->waiting;
      s->cv.notify_all();
      if (!s->cv.wait_for(lock, s->patience, [&] { return s->open || s->passed < s->allowed; })) {
        s->timed_out = true;
      }
      if (s->passed < s->allowed) ++s->passed;
      --s->waiting;
      return std::chrono::microseconds(0);
    };
  }
  // Lets one job of `tier` go and waits until the tier has finished it (its completion is
  // queued for the next step to collect). False when none was pending or it never finished.
  bool release_one(const DiskTier& tier) const {
    const size_t before = tier.jobs_in_flight();
    if (before == 0) return false;
    {
      std::lock_guard<std::mutex> lock(s_->mu);
      ++s_->allowed;
    }
    s_->cv.notify_all();
    const auto until = std::chrono::steady_clock::now() + s_->patience;
    while (tier.jobs_in_flight() >= before) {
      if (std::chrono::steady_clock::now() > until) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    return true;
  }
  // Every job goes at once from now on.
  void open() const {
    {
      std::lock_guard<std::mutex> lock(s_->mu);
      s_->open = true;
    }
    s_->cv.notify_all();
  }
  // Waits (up to the patience) until a hook is holding a job.
  bool wait_holding() const {
    std::unique_lock<std::mutex> lock(s_->mu);
    return s_->cv.wait_for(lock, s_->patience, [&] { return s_->waiting > 0; });
  }
  // A hook waited out its patience: something held the test up while the disk was gated.
  bool timed_out() const {
    std::lock_guard<std::mutex> lock(s_->mu);
    return s_->timed_out;
  }

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::chrono::seconds patience{30};
    int64_t allowed = 0;  // jobs let go so far
    int64_t passed = 0;   // of those, how many went
    int waiting = 0;      // hooks holding a job now
    bool open = false;
    bool timed_out = false;
  };
  std::shared_ptr<State> s_;
};

// Delays of 0..max drawn per job from a generator seeded with `seed` (a hook runs on the I/O
// thread only, so the sequence is the same on every run).
inline DiskTier::DelayHook random_delay(uint32_t seed, std::chrono::microseconds max) {
  auto rng = std::make_shared<std::mt19937>(seed);
  return [rng, max] {
    return std::chrono::microseconds(std::uniform_int_distribution<int64_t>(0, max.count())(*rng));
  };
}

// Waits (up to `limit`) until `tier` has no job queued or running.
inline bool wait_idle(const DiskTier& tier,
                      std::chrono::milliseconds limit = std::chrono::seconds(30)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (tier.jobs_in_flight() > 0) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return true;
}

}  // namespace baton::kv::testing
