// kill -9 while segments are being written, many times at random moments: every file left
// behind either loads exactly what was saved or is rejected; nothing wrong is ever served.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "kv/disk_store.h"
#include "kv/disk_test_util.h"

namespace baton::kv {
namespace {

using testing::chain;
using testing::options;
using testing::ScratchDir;

constexpr int kKills = 25;

// The child: writes segments of 64 KiB blocks forever, each chain from a fresh start token.
[[noreturn]] void write_forever(const std::string& dir, int round) {
  DiskStore s(options(dir, 64ull << 20, testing::test_layout(64 << 10, 4)));
  for (int i = 0;; ++i) {
    testing::save_chain(s, chain(s.options().layout, 4, round * 1000000 + i * 100));
  }
}

TEST(DiskCrash, KilledWritersLeaveOnlyFilesThatLoadRightOrAreRejected) {
  ScratchDir dir;
  std::mt19937 rng(1234);
  for (int round = 0; round < kKills; ++round) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) write_forever(dir.path(), round);
    std::this_thread::sleep_for(
        std::chrono::microseconds(std::uniform_int_distribution<int>(2000, 40000)(rng)));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer ended on its own";
  }
  DiskStore s(options(dir.path(), 64ull << 20, testing::test_layout(64 << 10, 4)));
  const auto st = s.stats();
  ASSERT_GT(st.files, 0u) << "no writer got a segment out before its kill";
  size_t checked = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(e.path().extension(), ".kvseg") << "leftover " << e.path();
  }
  // Every indexed chain loads completely with exactly the bytes that were written.
  for (int round = 0; round < kKills; ++round) {
    for (int i = 0;; ++i) {
      const auto blocks = chain(s.options().layout, 4, round * 1000000 + i * 100);
      if (!s.contains(blocks[0].hash)) break;
      EXPECT_EQ(testing::load_chain(s, blocks), 4u) << "round " << round << " segment " << i;
      ++checked;
    }
  }
  EXPECT_EQ(checked, st.files);
  EXPECT_TRUE(s.stats().errors.count("checksum") == 0);
}

}  // namespace
}  // namespace baton::kv
