#pragma once
// A fixed set of worker threads for the forward pass. The calling thread takes part, so a pool
// of size 1 has no workers and runs everything inline.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace baton::kernels {

class ThreadPool {
 public:
  // n_threads counts the caller; <= 0 means std::thread::hardware_concurrency().
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return int(workers_.size()) + 1; }

  // Runs fn(begin, end) over [0, n) split into size() contiguous chunks (fewer when n is
  // small); returns when all are done and rethrows the first exception any chunk threw. Calls
  // from several threads at once are serialised; a call from inside a chunk runs inline.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn);

  // Like parallel_for, but [0, n) is cut into pieces of `grain`: each thread owns a contiguous
  // share and takes its pieces from the front, in order; a thread that has run out takes the
  // others' last pieces, one at a time from the back. So a thread slowed by the machine (another
  // process on its core) runs fewer pieces instead of holding up the others at the end, and each
  // thread still walks one ascending run of [0, n) that a kernel can stream ahead through.
  void parallel_for_dynamic(int64_t n, int64_t grain,
                            const std::function<void(int64_t, int64_t)>& fn);
  // The same, where fn(begin, end, run_end) also learns the end of the run it is in: this thread
  // takes [end, run_end) next unless another thread takes its back first (run_end == end for a
  // piece taken from another thread). A kernel may prefetch up to run_end.
  void parallel_for_dynamic(int64_t n, int64_t grain,
                            const std::function<void(int64_t, int64_t, int64_t)>& fn);

 private:
  void worker_main(int index);
  void run_chunk(int index);

  std::vector<std::thread> workers_;
  std::mutex call_mutex_;  // one parallel_for at a time
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_cv_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  // Set while the caller sleeps on done_cv_: only then does the last worker take mutex_ to wake
  // it (a caller that finds the work done while spinning never meets a worker in the lock).
  std::atomic<bool> caller_sleeping_{false};
  // The job of the current generation.
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0;
  int chunks_ = 0;
  std::exception_ptr error_;
};

}  // namespace baton::kernels
