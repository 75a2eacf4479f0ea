#pragma once
// Time budgets for tests that must wait on real time: deadlines firing, shutdown finishing,
// sockets filling, a state showing up. Each budget is what an optimised build needs with a wide
// margin for a loaded machine, times how much slower this build runs its code (sanitizer builds
// are several times slower). A budget bounds a wait; it is never how long a test sleeps to let
// something happen: ordering waits on the event itself (wait_until, a log line, a counter).
#include <chrono>
#include <thread>

namespace baton::testing {

#if defined(__SANITIZE_THREAD__)
#define BATON_TEST_TSAN 1
#elif defined(__SANITIZE_ADDRESS__)
#define BATON_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BATON_TEST_TSAN 1
#elif __has_feature(address_sanitizer) || __has_feature(memory_sanitizer)
#define BATON_TEST_ASAN 1
#endif
#endif

#if defined(BATON_TEST_TSAN)
inline constexpr int kBuildSlowdown = 10;  // ThreadSanitizer: 5-15x, more with many threads
#elif defined(BATON_TEST_ASAN)
inline constexpr int kBuildSlowdown = 5;  // ASan+UBSan, built for debugging: 3-5x
#else
inline constexpr int kBuildSlowdown = 1;
#endif
inline constexpr bool kSanitized = kBuildSlowdown > 1;

// `nominal` (what an optimised build needs, margin for load included) scaled to this build.
constexpr std::chrono::milliseconds scaled(std::chrono::milliseconds nominal) {
  return nominal * kBuildSlowdown;
}

using namespace std::chrono_literals;

// Past a configured grace or drain, how long a server or a process may take to be gone (join its
// threads, close its sockets, exit).
inline constexpr std::chrono::milliseconds kExitSlack = scaled(2000ms);
// A reply, close or state change that follows at once on an idle machine.
inline constexpr std::chrono::milliseconds kPromptWait = scaled(10s);
// Work that takes seconds on an idle machine (megabytes of tokens filling socket buffers).
inline constexpr std::chrono::milliseconds kSlowWait = scaled(60s);

// Polls `done` every `every` until it holds (true) or `budget` has passed (false, after a last
// check). For conditions that have no event to wait on from the outside: a counter, a state.
template <class Done>
bool wait_until(Done done, std::chrono::milliseconds budget = kPromptWait,
                std::chrono::milliseconds every = 5ms) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(every);
  }
  return done();
}

}  // namespace baton::testing
