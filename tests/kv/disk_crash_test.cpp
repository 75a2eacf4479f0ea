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
// Far above what the writers get out before they are killed: an eviction would take a round's
// first segments and leave its later ones unchecked.
constexpr uint64_t kBudget = 1ull << 30;

// The child: writes segments of 64 KiB blocks forever, each chain from a fresh start token,
// and says on `ready` when its first segment is out (so every kill lands among the writes, even
// on a slow sanitizer build).
[[noreturn]] void write_forever(const std::string& dir, int round, int ready) {
  DiskStore s(options(dir, kBudget, testing::test_layout(64 << 10, 4)));
  for (int i = 0;; ++i) {
    testing::save_chain(s, chain(s.options().layout, 4, round * 1000000 + i * 100));
    if (i == 0) {
      const char one = 1;
      (void)!::write(ready, &one, 1);
    }
  }
}

TEST(DiskCrash, KilledWritersLeaveOnlyFilesThatLoadRightOrAreRejected) {
  ScratchDir dir;
  std::mt19937 rng(1234);
  for (int round = 0; round < kKills; ++round) {
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) write_forever(dir.path(), round, ready[1]);
    char one;
    ASSERT_EQ(::read(ready[0], &one, 1), 1);
    ::close(ready[0]);
    ::close(ready[1]);
    std::this_thread::sleep_for(
        std::chrono::microseconds(std::uniform_int_distribution<int>(0, 20000)(rng)));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer ended on its own";
  }
  DiskStore s(options(dir.path(), kBudget, testing::test_layout(64 << 10, 4)));
  const auto st = s.stats();
  ASSERT_GE(st.files, static_cast<uint64_t>(kKills)) << "each writer got one segment out";
  size_t checked = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    if (e.path().filename() == kDiskLockName) continue;
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
