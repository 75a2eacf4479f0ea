#include "kernels/thread_pool.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <utility>

namespace baton::kernels {
namespace {

thread_local bool t_inside_pool = false;

// Poll this many times before sleeping: a forward pass issues hundreds of short parallel_for
// calls per token, and a futex wake-up per call costs more than the work. After the first
// polls each one yields, so an oversubscribed machine still runs the thread with work.
constexpr int kSpinPolls = 2000;
constexpr int kPausePolls = 200;

inline void cpu_relax(int i) {
  if (i >= kPausePolls) {
    std::this_thread::yield();
    return;
  }
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) {
  if (n_threads <= 0) n_threads = int(std::max(1u, std::thread::hardware_concurrency()));
  workers_.reserve(size_t(n_threads - 1));
  for (int i = 1; i < n_threads; ++i) workers_.emplace_back([this, i] { worker_main(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true);
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::run_chunk(int index) {
  if (index >= chunks_) return;
  const int64_t begin = n_ * index / chunks_;
  const int64_t end = n_ * (index + 1) / chunks_;
  if (begin >= end) return;
  try {
    (*fn_)(begin, end);
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_) error_ = std::current_exception();
  }
}

void ThreadPool::worker_main(int index) {
  t_inside_pool = true;
  uint64_t seen = 0;
  for (;;) {
    uint64_t gen = generation_.load(std::memory_order_acquire);
    for (int i = 0; i < kSpinPolls && gen == seen; ++i) {
      cpu_relax(i);
      gen = generation_.load(std::memory_order_acquire);
    }
    if (gen == seen) {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return generation_.load() != seen; });
      gen = generation_.load();
    }
    seen = gen;
    if (stop_.load(std::memory_order_acquire)) return;
    run_chunk(index);
    // Sequentially consistent with the caller's caller_sleeping_ store and pending_ load: either
    // the caller sees pending_ reach 0 before it sleeps, or this sees it sleeping and wakes it.
    if (pending_.fetch_sub(1) == 1 && caller_sleeping_.load()) {
      std::lock_guard<std::mutex> lock(mutex_);
      done_cv_.notify_one();
    }
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int chunks = int(std::min<int64_t>(size(), n));
  if (chunks == 1 || t_inside_pool) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> call_lock(call_mutex_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    n_ = n;
    chunks_ = chunks;
    error_ = nullptr;
    pending_.store(int(workers_.size()), std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  t_inside_pool = true;
  run_chunk(0);
  t_inside_pool = false;
  for (int i = 0; i < kSpinPolls && pending_.load(std::memory_order_acquire) != 0; ++i) {
    cpu_relax(i);
  }
  if (pending_.load(std::memory_order_acquire) != 0) {
    std::unique_lock<std::mutex> lock(mutex_);
    caller_sleeping_.store(true);
    done_cv_.wait(lock, [&] { return pending_.load() == 0; });
    caller_sleeping_.store(false);
  }
  // Every worker is done with this job: error_ was written before its pending_ decrement.
  fn_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void ThreadPool::parallel_for_dynamic(int64_t n, int64_t grain,
                                      const std::function<void(int64_t, int64_t)>& fn) {
  parallel_for_dynamic(n, grain, [&](int64_t b, int64_t e, int64_t) { fn(b, e); });
}

namespace {

// One thread's share of a parallel_for_dynamic: [front, back) still to run, both in one word so
// that the owner taking a front piece and another thread taking a back piece never both get
// the same index. On its own cache line: the owner updates it every piece.
struct alignas(64) OwnedRun {
  std::atomic<uint64_t> bounds{0};

  static uint64_t pack(int64_t front, int64_t back) {
    return uint64_t(front) | (uint64_t(back) << 32);
  }
  void set(int64_t front, int64_t back) { bounds.store(pack(front, back)); }
  // Takes up to `grain` indices from the front (the owner) or the back (anyone else); false when
  // none are left. run_end: where this run ends after the take.
  bool take(int64_t grain, bool from_front, int64_t& b, int64_t& e, int64_t& run_end) {
    uint64_t cur = bounds.load();
    for (;;) {
      const auto front = int64_t(cur & 0xffffffffu), back = int64_t(cur >> 32);
      if (front >= back) return false;
      b = from_front ? front : std::max(front, back - grain);
      e = from_front ? std::min(back, front + grain) : back;
      const uint64_t next = from_front ? pack(e, back) : pack(front, b);
      if (bounds.compare_exchange_weak(cur, next)) {
        run_end = from_front ? back : e;
        return true;
      }
    }
  }
};

}  // namespace

void ThreadPool::parallel_for_dynamic(int64_t n, int64_t grain,
                                      const std::function<void(int64_t, int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  if (size() == 1 || n <= grain || t_inside_pool) {
    fn(0, n, n);
    return;
  }
  if (n > int64_t(INT32_MAX)) {  // beyond the packed bounds: one counter, no runs
    std::atomic<int64_t> next{0};
    parallel_for(size(), [&](int64_t, int64_t) {
      for (int64_t b = next.fetch_add(grain); b < n; b = next.fetch_add(grain)) {
        const int64_t e = std::min(n, b + grain);
        fn(b, e, e);
      }
    });
    return;
  }
  const int threads = size();
  std::vector<OwnedRun> runs(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) runs[size_t(t)].set(n * t / threads, n * (t + 1) / threads);
  parallel_for(threads, [&](int64_t self, int64_t) {
    int64_t b = 0, e = 0, run_end = 0;
    while (runs[size_t(self)].take(grain, true, b, e, run_end)) fn(b, e, run_end);
    for (bool found = true; found;) {
      found = false;
      for (int k = 1; k < threads; ++k) {
        auto& other = runs[size_t((self + k) % threads)];
        if (other.take(grain, false, b, e, run_end)) {
          fn(b, e, run_end);
          found = true;
        }
      }
    }
  });
}

}  // namespace baton::kernels
