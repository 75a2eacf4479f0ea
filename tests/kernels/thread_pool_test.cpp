#include "kernels/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace baton::kernels {
namespace {

TEST(ThreadPool, CoversRangeExactlyOnceInContiguousChunks) {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int64_t n : {1, 2, 3, 7, 100, 1001}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::atomic<int> calls{0};
      pool.parallel_for(n, [&](int64_t b, int64_t e) {
        ASSERT_LT(b, e);
        ++calls;
        for (int64_t i = b; i < e; ++i) ++hits[size_t(i)];
      });
      for (auto& h : hits) ASSERT_EQ(h.load(), 1);
      EXPECT_LE(calls.load(), threads);
    }
  }
}

TEST(ThreadPool, DynamicCoversRangeExactlyOnceInGrainPieces) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (int64_t n : {1, 5, 64, 1001}) {
      for (int64_t grain : {0, 1, 7, 2000}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        pool.parallel_for_dynamic(n, grain, [&](int64_t b, int64_t e) {
          ASSERT_LT(b, e);
          // One thread, or a range within one grain, runs as a single call.
          const int64_t piece = threads == 1 || n <= grain ? n : std::max<int64_t>(grain, 1);
          ASSERT_LE(e - b, piece);
          for (int64_t i = b; i < e; ++i) ++hits[size_t(i)];
        });
        for (auto& h : hits) ASSERT_EQ(h.load(), 1) << n << " " << grain;
      }
    }
  }
}

// The first piece does not finish until every other piece has: with a fixed split it would wait
// for pieces that its own thread owns, so this ends only if the other thread takes them.
TEST(ThreadPool, DynamicPiecesGoToTheThreadThatIsFree) {
  ThreadPool pool(2);
  constexpr int64_t kPieces = 40;
  std::atomic<int64_t> done{0};
  std::atomic<bool> timed_out{false};
  pool.parallel_for_dynamic(kPieces, 1, [&](int64_t b, int64_t) {
    if (b == 0) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (done.load() < kPieces - 1) {
        if (std::chrono::steady_clock::now() > until) {
          timed_out = true;
          break;
        }
        std::this_thread::yield();
      }
    }
    ++done;
  });
  EXPECT_FALSE(timed_out.load());
  EXPECT_EQ(done.load(), kPieces);
}

// Each thread walks its own share in ascending pieces, and run_end tells it where that walk
// ends: no piece it is told it takes next is ever run by anyone before it gets there, except a
// piece another thread took from the back (then run_end shrinks to that piece's end).
TEST(ThreadPool, DynamicRunsAscendAndRunEndBoundsWhatFollows) {
  for (int threads : {2, 3}) {
    ThreadPool pool(threads);
    for (int64_t n : {2, 9, 64, 1001}) {
      for (int64_t grain : {1, 3, 16}) {
        std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
        std::mutex mu;
        std::vector<std::array<int64_t, 4>> calls;  // thread tag, begin, end, run_end
        pool.parallel_for_dynamic(n, grain, [&](int64_t b, int64_t e, int64_t run_end) {
          ASSERT_LT(b, e);
          ASSERT_GE(run_end, e);
          ASSERT_LE(run_end, n);
          for (int64_t i = b; i < e; ++i) ++hits[size_t(i)];
          std::lock_guard<std::mutex> lock(mu);
          calls.push_back(
              {int64_t(std::hash<std::thread::id>{}(std::this_thread::get_id())), b, e, run_end});
        });
        for (auto& h : hits) ASSERT_EQ(h.load(), 1) << n << " " << grain;
        if (n <= grain) continue;
        // A call's [end, run_end) is covered by that same thread's later calls, in order, up
        // to where another thread's back piece begins.
        for (size_t i = 0; i < calls.size(); ++i) {
          int64_t at = calls[i][2];
          for (size_t j = i + 1; j < calls.size() && at < calls[i][3]; ++j) {
            if (calls[j][0] == calls[i][0] && calls[j][1] == at) at = calls[j][2];
          }
          for (const auto& c : calls) {
            if (at < calls[i][3] && c[0] != calls[i][0] && c[1] <= at && at < c[2]) {
              at = calls[i][3];  // stolen from the back: the rest was never this thread's
            }
          }
          EXPECT_EQ(at, calls[i][3]) << "n " << n << " grain " << grain << " call " << i;
        }
      }
    }
  }
}

// A thread that is held up loses the back of its share to the others, piece by piece from the
// end, and keeps the front it already walks.
TEST(ThreadPool, DynamicStealsFromTheBackOfAHeldUpThread) {
  ThreadPool pool(2);
  constexpr int64_t kPieces = 20;  // thread 0 owns [0, 10), thread 1 [10, 20)
  std::atomic<int64_t> done{0};
  std::mutex mu;
  std::vector<int64_t> stolen;
  pool.parallel_for_dynamic(kPieces, 1, [&](int64_t b, int64_t e, int64_t run_end) {
    if (b == 0) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (done.load() < kPieces - 1 && std::chrono::steady_clock::now() < until) {
        std::this_thread::yield();
      }
    } else if (b < 10) {
      std::lock_guard<std::mutex> lock(mu);
      stolen.push_back(b);
      EXPECT_EQ(run_end, e);
    }
    ++done;
  });
  EXPECT_EQ(done.load(), kPieces);
  EXPECT_EQ(stolen, (std::vector<int64_t>{9, 8, 7, 6, 5, 4, 3, 2, 1}));
}

TEST(ThreadPool, ZeroAndDefaultSize) {
  ThreadPool pool(0);
  EXPECT_GE(pool.size(), 1);
  bool called = false;
  pool.parallel_for(0, [&](int64_t, int64_t) { called = true; });
  EXPECT_FALSE(called);
}

TEST(ThreadPool, RethrowsAndStaysUsable) {
  ThreadPool pool(3);
  EXPECT_THROW(pool.parallel_for(9,
                                 [](int64_t b, int64_t) {
                                   if (b > 0) throw std::runtime_error("boom");
                                 }),
               std::runtime_error);
  std::atomic<int64_t> sum{0};
  pool.parallel_for(100, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) sum += i;
  });
  EXPECT_EQ(sum.load(), 4950);
}

TEST(ThreadPool, NestedCallRunsInline) {
  ThreadPool pool(2);
  std::atomic<int64_t> sum{0};
  pool.parallel_for(4, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      pool.parallel_for(10, [&](int64_t b2, int64_t e2) { sum += e2 - b2; });
    }
  });
  EXPECT_EQ(sum.load(), 40);
}

TEST(ThreadPool, ManyShortCalls) {
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  for (int i = 0; i < 2000; ++i) {
    pool.parallel_for(6, [&](int64_t b, int64_t e) { total += e - b; });
  }
  EXPECT_EQ(total.load(), 12000);
}

// Workers that finish long after the caller's own chunk: the caller stops spinning and sleeps,
// and the last worker must wake it (never a lost wake-up: the test would hang). Chunk lengths
// vary so the last decrement lands before, during and after the caller goes to sleep; a worker
// that throws must still reach the sleeping caller with its error.
TEST(ThreadPool, CallerSleepsUntilTheLastWorkerWakesIt) {
  ThreadPool pool(3);
  for (int round = 0; round < 40; ++round) {
    std::atomic<int64_t> done{0};
    const auto pause = std::chrono::microseconds(50 * (round % 8) * (round % 8));
    auto job = [&](int64_t b, int64_t e) {
      if (b > 0) std::this_thread::sleep_for(pause * b);
      done += e - b;
      if (round % 10 == 9 && b == 2) throw std::runtime_error("late");
    };
    if (round % 10 == 9) {
      EXPECT_THROW(pool.parallel_for(3, job), std::runtime_error);
    } else {
      pool.parallel_for(3, job);
    }
    ASSERT_EQ(done.load(), 3) << "round " << round;
  }
}

}  // namespace
}  // namespace baton::kernels
