// Replicas behind a proxy share one --kv-disk-dir. Two and three processes save and load
// chains in one directory while they are killed at random moments and started again: no block
// is ever served with bytes other than its own, the published segments stay within the budget
// at every moment the directory is looked at, and a segment whose save returned is there
// afterwards.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kv/disk_store.h"
#include "kv/disk_test_util.h"

namespace baton::kv {
namespace {

using testing::chain;
using testing::data_for;
using testing::ScratchDir;

constexpr int kChains = 40;
constexpr int kChainBlocks = 4;
constexpr auto kRunFor = std::chrono::milliseconds(2500);

DiskLayout shared_layout() {
  return testing::test_layout(16 << 10, 4);
}

std::vector<DiskBlock> chain_no(int c) {
  return chain(shared_layout(), kChainBlocks, c * 1000);
}

// A report line is shorter than PIPE_BUF, so a kill never leaves half of one in the pipe.
void report(int fd, char what, int c) {
  char line[32];
  const int n = std::snprintf(line, sizeof line, "%c %d\n", what, c);
  (void)!::write(fd, line, static_cast<size_t>(n));
}

// One replica's disk traffic: chains picked at random are loaded when the directory holds them
// (every byte compared with what was saved: 'M' on a misread) and saved when it does not ('S'
// once the save has returned, so the segment is fsynced and published; 'F' when it failed, as it
// would if another process took a live writer's file for a crash's leftover).
[[noreturn]] void replica(const std::string& dir, uint64_t budget, uint32_t seed, int out) {
  DiskStore s(testing::options(dir, budget, shared_layout()));
  std::mt19937 rng(seed);
  const uint64_t bb = shared_layout().block_bytes;
  for (;;) {
    const int c = static_cast<int>(rng() % kChains);
    const auto blocks = chain_no(c);
    s.refresh_if_changed();
    std::vector<uint64_t> hashes;
    for (const auto& b : blocks) hashes.push_back(b.hash);
    if (s.leading_on_disk(hashes) == blocks.size()) {
      std::vector<std::vector<uint8_t>> dst(blocks.size(), std::vector<uint8_t>(bb));
      std::vector<uint8_t*> ptrs;
      for (auto& d : dst) ptrs.push_back(d.data());
      const size_t n = s.load(blocks, ptrs);
      for (size_t i = 0; i < n; ++i) {
        if (dst[i] != data_for(blocks[i].hash, bb)) report(out, 'M', c);
      }
      report(out, 'L', static_cast<int>(n));
    } else {
      report(out, testing::save_chain(s, blocks) ? 'S' : 'F', c);
    }
  }
}

// What the directory's published segments add up to (files may vanish while it is listed).
uint64_t segment_bytes(const std::string& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() != ".kvseg") continue;
    const auto n = std::filesystem::file_size(e.path(), ec);
    if (!ec) total += n;
  }
  return total;
}

struct Outcome {
  std::set<int> saved;  // chains some replica saved
  int misreads = 0;
  int failed_saves = 0;
  int loads = 0;
  int kills = 0;
  uint64_t most_bytes = 0;  // the most the published segments held at one look
};

class Replicas {
 public:
  Replicas(std::string dir, uint64_t budget, int n) : dir_(std::move(dir)), budget_(budget) {
    int p[2];
    EXPECT_EQ(::pipe2(p, O_CLOEXEC), 0);
    in_ = p[0];
    out_ = p[1];
    ::fcntl(in_, F_SETFL, O_NONBLOCK);
    for (int i = 0; i < n; ++i) pids_.push_back(start());
  }
  ~Replicas() {
    for (pid_t pid : pids_) stop(pid);
    ::close(in_);
    ::close(out_);
  }

  // Runs them for `d`, killing one at random every few milliseconds and starting it again.
  Outcome run(std::chrono::milliseconds d, uint32_t seed) {
    Outcome o;
    std::mt19937 rng(seed);
    const auto end = std::chrono::steady_clock::now() + d;
    auto next_kill = std::chrono::steady_clock::now() + std::chrono::milliseconds(rng() % 60);
    while (std::chrono::steady_clock::now() < end) {
      o.most_bytes = std::max(o.most_bytes, segment_bytes(dir_));
      if (std::chrono::steady_clock::now() >= next_kill) {
        const size_t i = rng() % pids_.size();
        stop(pids_[i]);
        pids_[i] = start();
        ++o.kills;
        next_kill = std::chrono::steady_clock::now() + std::chrono::milliseconds(10 + rng() % 60);
      }
      drain(o);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    for (pid_t& pid : pids_) stop(pid);
    pids_.clear();
    drain(o);
    return o;
  }

 private:
  pid_t start() {
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(in_);
      replica(dir_, budget_, static_cast<uint32_t>(::getpid()), out_);
    }
    return pid;
  }
  static void stop(pid_t pid) {
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
  void drain(Outcome& o) {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(in_, buf, sizeof buf);
      if (n <= 0) break;
      pending_.append(buf, static_cast<size_t>(n));
    }
    size_t eol;
    while ((eol = pending_.find('\n')) != std::string::npos) {
      const char what = pending_[0];
      const int v = std::atoi(pending_.c_str() + 2);
      pending_.erase(0, eol + 1);
      if (what == 'S') o.saved.insert(v);
      if (what == 'M') ++o.misreads;
      if (what == 'F') ++o.failed_saves;
      if (what == 'L' && v > 0) ++o.loads;
    }
  }

  std::string dir_;
  uint64_t budget_;
  int in_ = -1, out_ = -1;
  std::vector<pid_t> pids_;
  std::string pending_;
};

class DiskSharedDir : public ::testing::TestWithParam<int> {};

uint64_t one_segment_bytes() {
  ScratchDir dir;
  DiskStore s(testing::options(dir.path(), 1 << 30, shared_layout()));
  EXPECT_TRUE(testing::save_chain(s, chain_no(0)));
  return s.stats().bytes;
}

TEST_P(DiskSharedDir, KilledReplicasLoseNoSavedSegmentAndNeverMisread) {
  ScratchDir dir;
  Outcome o;
  {
    Replicas r(dir.path(), 1ull << 30, GetParam());
    o = r.run(kRunFor, 7u + static_cast<uint32_t>(GetParam()));
  }
  EXPECT_EQ(o.misreads, 0);
  EXPECT_EQ(o.failed_saves, 0);
  EXPECT_GT(o.kills, 5);
  EXPECT_GT(o.loads, 0) << "replicas loaded what others saved";
  ASSERT_FALSE(o.saved.empty());
  DiskStore after(testing::options(dir.path(), 1ull << 30, shared_layout()));
  EXPECT_TRUE(after.stats().errors.empty()) << "a published segment failed its checks";
  for (int c : o.saved) {
    EXPECT_EQ(testing::load_chain(after, chain_no(c)), size_t{kChainBlocks}) << "chain " << c;
  }
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_NE(e.path().extension(), ".tmp") << "a killed writer's file was left";
  }
}

TEST_P(DiskSharedDir, TheBudgetHoldsAcrossProcesses) {
  ScratchDir dir;
  const uint64_t seg = one_segment_bytes();
  const uint64_t budget = seg * 6 + seg / 2;  // far less than the 40 chains need
  Outcome o;
  {
    Replicas r(dir.path(), budget, GetParam());
    o = r.run(kRunFor, 11u + static_cast<uint32_t>(GetParam()));
  }
  EXPECT_EQ(o.misreads, 0);
  EXPECT_EQ(o.failed_saves, 0);
  EXPECT_LE(o.most_bytes, budget) << "published segments over the budget at one look";
  EXPECT_GT(o.saved.size(), 6u) << "replicas evicted each other's segments to save theirs";
  DiskStore after(testing::options(dir.path(), budget, shared_layout()));
  EXPECT_LE(after.stats().bytes, budget);
  EXPECT_TRUE(after.stats().errors.empty());
  for (int c = 0; c < kChains; ++c) {
    const auto blocks = chain_no(c);
    if (!after.contains(blocks[0].hash)) continue;
    EXPECT_EQ(testing::load_chain(after, blocks), size_t{kChainBlocks}) << "chain " << c;
  }
}

INSTANTIATE_TEST_SUITE_P(Processes, DiskSharedDir, ::testing::Values(2, 3), [](const auto& info) {
  return std::to_string(info.param) + "_processes";
});

}  // namespace
}  // namespace baton::kv
