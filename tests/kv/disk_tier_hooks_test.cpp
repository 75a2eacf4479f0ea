// DiskTier's test hooks: a held save is pending (known, not yet on disk, its completion not
// queued) until the test lets it go, a load queued meanwhile still goes first, and each job
// draws its delay from the hook of its kind exactly once. And a save not begun can be withdrawn.
#include <gtest/gtest.h>

#include <atomic>

#include "kv/disk_hooks.h"
#include "kv/disk_test_util.h"
#include "kv/disk_tier.h"

namespace baton::kv {
namespace {

using testing::DiskGate;
using testing::ScratchDir;

// Blocks with data_for(hash), kept alive for the save's lifetime.
struct Payload {
  std::vector<DiskBlock> blocks;
  std::vector<std::vector<uint8_t>> bytes;
  DiskSave job(int32_t first_pool_block) const {
    DiskSave s;
    s.blocks = blocks;
    for (size_t i = 0; i < bytes.size(); ++i) {
      s.data.push_back(bytes[i].data());
      s.pool_blocks.push_back(first_pool_block + static_cast<int32_t>(i));
    }
    return s;
  }
  std::vector<uint64_t> hashes() const {
    std::vector<uint64_t> h;
    for (const auto& b : blocks) h.push_back(b.hash);
    return h;
  }
};

Payload payload(int n, int32_t first_token) {
  Payload p;
  const DiskLayout l = testing::test_layout();
  p.blocks = testing::chain(l, n, first_token);
  for (const auto& b : p.blocks) p.bytes.push_back(testing::data_for(b.hash, l.block_bytes));
  return p;
}

TEST(DiskTierHooks, AHeldSaveIsPendingUntilTheTestLetsItGo) {
  ScratchDir dir(true);
  DiskTier tier(testing::options(dir.path()), {});
  DiskGate gate;
  gate.attach(tier);
  const Payload a = payload(4, 10);
  tier.save(a.job(100));  // returns at once: the caller never waits for the disk
  ASSERT_TRUE(gate.wait_holding());
  EXPECT_EQ(tier.jobs_in_flight(), 1u);
  EXPECT_TRUE(tier.known(a.blocks[0].hash)) << "a queued save counts as known";
  EXPECT_EQ(tier.leading_on_disk(a.hashes()), 0u);
  EXPECT_TRUE(tier.take_done().empty());
  ASSERT_TRUE(gate.release_one(tier));
  EXPECT_EQ(tier.jobs_in_flight(), 0u);
  EXPECT_EQ(tier.leading_on_disk(a.hashes()), 4u);
  const auto done = tier.take_done();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].kind, DiskDone::Kind::Save);
  EXPECT_EQ(done[0].n_ok, 4u);
  EXPECT_EQ(done[0].pool_blocks, (std::vector<int32_t>{100, 101, 102, 103}));
  EXPECT_FALSE(gate.release_one(tier)) << "nothing left to let go";
  EXPECT_FALSE(gate.timed_out());
}

TEST(DiskTierHooks, ALoadQueuedWhileASaveIsHeldGoesFirst) {
  ScratchDir dir(true);
  DiskTier tier(testing::options(dir.path()), {});
  const Payload a = payload(3, 10), b = payload(2, 500);
  tier.save(a.job(0));
  ASSERT_TRUE(testing::wait_idle(tier));
  ASSERT_EQ(tier.take_done().size(), 1u);
  DiskGate gate;
  gate.attach(tier);
  tier.save(b.job(10));
  ASSERT_TRUE(gate.wait_holding());  // the I/O thread is in the save's hook
  std::vector<std::vector<uint8_t>> dst(3, std::vector<uint8_t>(a.bytes[0].size()));
  DiskLoad load;
  load.request_id = 7;
  load.expected = a.blocks;
  for (auto& d : dst) load.dst.push_back(d.data());
  tier.load(std::move(load));
  ASSERT_TRUE(gate.release_one(tier));
  auto first = tier.take_done();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].kind, DiskDone::Kind::Load);
  EXPECT_EQ(first[0].request_id, 7u);
  EXPECT_EQ(first[0].n_ok, 3u);
  EXPECT_EQ(dst, a.bytes);
  EXPECT_EQ(tier.leading_on_disk(b.hashes()), 0u) << "the save is still held";
  ASSERT_TRUE(gate.release_one(tier));
  auto second = tier.take_done();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].kind, DiskDone::Kind::Save);
  EXPECT_EQ(tier.leading_on_disk(b.hashes()), 2u);
}

TEST(DiskTierHooks, AQueuedSaveIsWithdrawnNewestFirstAndForgotten) {
  ScratchDir dir(true);
  DiskTier tier(testing::options(dir.path()), {});
  DiskGate gate;
  gate.attach(tier);
  const Payload a = payload(2, 10), b = payload(2, 500), c = payload(2, 900);
  tier.save(a.job(0));
  ASSERT_TRUE(gate.wait_holding());
  tier.save(b.job(10));
  tier.save(c.job(20));
  auto none = [](const std::vector<int32_t>&) { return false; };
  EXPECT_FALSE(tier.withdraw_save(none).has_value());
  // The newest that frees something: c's blocks do not, b's do.
  auto b_only = [](const std::vector<int32_t>& pins) { return pins.front() == 10; };
  EXPECT_EQ(tier.withdraw_save(b_only), (std::vector<int32_t>{10, 11}));
  EXPECT_FALSE(tier.known(b.blocks[0].hash)) << "a withdrawn save is no longer pending";
  auto any = [](const std::vector<int32_t>&) { return true; };
  EXPECT_EQ(tier.withdraw_save(any), (std::vector<int32_t>{20, 21}));
  EXPECT_EQ(tier.withdraw_save(any), (std::vector<int32_t>{0, 1})) << "held in its hook, not begun";
  EXPECT_EQ(tier.jobs_in_flight(), 0u);
  gate.open();  // the hook lets go of a job that is gone: nothing is written
  tier.save(c.job(20));
  ASSERT_TRUE(testing::wait_idle(tier));
  EXPECT_EQ(tier.leading_on_disk(a.hashes()), 0u);
  EXPECT_EQ(tier.leading_on_disk(b.hashes()), 0u);
  EXPECT_EQ(tier.leading_on_disk(c.hashes()), 2u);
  const auto done = tier.take_done();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].pool_blocks, (std::vector<int32_t>{20, 21}));
}

TEST(DiskTierHooks, EachJobDrawsItsDelayFromTheHookOfItsKindOnce) {
  ScratchDir dir(true);
  DiskTier tier(testing::options(dir.path()), {});
  std::atomic<int> saves{0}, loads{0};
  auto counted = [](std::atomic<int>& n, DiskTier::DelayHook inner) {
    return [&n, inner] {
      ++n;
      return inner();
    };
  };
  tier.set_save_delay(counted(saves, testing::random_delay(1, std::chrono::microseconds(2000))));
  tier.set_load_delay(counted(loads, testing::random_delay(2, std::chrono::microseconds(2000))));
  std::vector<Payload> written;
  for (int i = 0; i < 5; ++i) written.push_back(payload(2, 100 * i));
  for (int i = 0; i < 5; ++i) tier.save(written[static_cast<size_t>(i)].job(0));
  ASSERT_TRUE(testing::wait_idle(tier));
  EXPECT_EQ(saves.load(), 5);
  EXPECT_EQ(loads.load(), 0);
  std::vector<std::vector<uint8_t>> dst(3 * 2, std::vector<uint8_t>(written[0].bytes[0].size()));
  for (int i = 0; i < 3; ++i) {
    DiskLoad load;
    load.expected = written[static_cast<size_t>(i)].blocks;
    for (int k = 0; k < 2; ++k) load.dst.push_back(dst[static_cast<size_t>(2 * i + k)].data());
    tier.load(std::move(load));
  }
  ASSERT_TRUE(testing::wait_idle(tier));
  EXPECT_EQ(saves.load(), 5);
  EXPECT_EQ(loads.load(), 3);
  size_t loaded = 0;
  for (const auto& d : tier.take_done()) loaded += d.kind == DiskDone::Kind::Load ? d.n_ok : 0;
  EXPECT_EQ(loaded, 6u);
  // The same seed draws the same delays.
  auto x = testing::random_delay(9, std::chrono::microseconds(1000));
  auto y = testing::random_delay(9, std::chrono::microseconds(1000));
  for (int i = 0; i < 20; ++i) EXPECT_EQ(x(), y());
}

}  // namespace
}  // namespace baton::kv
