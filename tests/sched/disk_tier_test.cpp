// The KV disk tier under the engine loop, with the fake engine (whose "KV" is the token ids, so a
// block restored from the wrong place changes the answer): prefixes come back from disk after a
// restart and after RAM eviction, a load never holds up other requests, a cancel while loading
// frees everything, a damaged file is skipped and recomputed, and a decoder short of blocks that
// the disk tier pins takes them back from a queued save or waits parked, never fails.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/fake_engine.h"
#include "kv/disk_hooks.h"
#include "kv/disk_test_util.h"
#include "sched/driver.h"
#include "sched/harness.h"

namespace baton::sched {
namespace {

using engine::FakeEngine;
using testing::Driver;
using testing::greedy;
using testing::make_prompt;
using testing::small_blocks;

SchedConfig with_disk(const std::string& dir, int32_t parallel = 2, int64_t kv_ram_mb = 4) {
  SchedConfig c;
  c.parallel = parallel;
  c.ctx = 1024;
  c.prefill_chunk = 64;
  c.mixed_prefill_chunk = 16;
  c.kv_ram_mb = kv_ram_mb;
  c.kv_disk_dir = dir;
  c.kv_disk_space_mb = 16;
  return c;
}

// Runs one greedy request to the end on a fresh engine + loop and returns its outcome.
struct Run {
  testing::Outcome out;
  Metrics metrics;
};
Run run_one(const SchedConfig& c, const std::vector<int32_t>& prompt, int32_t max_tokens) {
  FakeEngine eng(small_blocks());
  LoopCore core(eng, c);
  Driver d(core);
  const uint64_t id = d.submit(greedy(prompt, max_tokens));
  EXPECT_TRUE(d.run_until_done());
  return {d.out[id], core.metrics()};
}

TEST(DiskTier, APrefixComesBackFromDiskAfterARestart) {
  kv::testing::ScratchDir dir;
  const auto conv = make_prompt(150, 1);
  const auto cold = run_one(with_disk(dir.path()), conv, 6);
  ASSERT_TRUE(cold.out.finished);
  EXPECT_EQ(cold.out.final.stats.cached_tokens, 0);
  // The next turn resends the conversation and its answer, plus a new message.
  auto turn = conv;
  turn.insert(turn.end(), cold.out.tokens.begin(), cold.out.tokens.end());
  const auto more = make_prompt(20, 2);
  turn.insert(turn.end(), more.begin(), more.end());
  const auto warm = run_one(with_disk(dir.path()), turn, 6);
  ASSERT_TRUE(warm.out.finished);
  EXPECT_EQ(warm.out.tokens, FakeEngine(small_blocks()).reference(turn, 6, false));
  // 150 + 6 tokens were computed; the last sampled token never was: 155 positions, 9 blocks.
  EXPECT_EQ(warm.out.final.stats.cached_tokens, 9 * 16);
  EXPECT_EQ(warm.metrics.kv_disk_hits_total, 1u);
  EXPECT_EQ(warm.metrics.kv_disk_loaded_tokens_total, 9u * 16);
  EXPECT_GE(warm.metrics.kv_disk_files, 1);
}

TEST(DiskTier, BlocksEvictedFromRamAreRestoredFromDisk) {
  kv::testing::ScratchDir dir;
  FakeEngine eng(small_blocks());
  LoopCore core(eng, with_disk(dir.path(), 1, 2));  // 32 blocks of RAM
  Driver d(core);
  const auto conv = make_prompt(120, 3);
  d.submit(greedy(conv, 4));
  ASSERT_TRUE(d.run_until_done());
  for (int i = 0; i < 4; ++i) d.submit(greedy(make_prompt(200, 10 + i), 4));  // evicts conv
  ASSERT_TRUE(d.run_until_done());
  ASSERT_EQ(core.pool().peek(conv), 0) << "the conversation should be out of RAM by now";
  const uint64_t again = d.submit(greedy(conv, 4));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[again].tokens, eng.reference(conv, 4, false));
  EXPECT_EQ(d.out[again].final.stats.cached_tokens, 7 * 16);
  EXPECT_GE(core.metrics().kv_disk_hits_total, 1u);
}

TEST(DiskTier, ALoadDoesNotHoldUpOtherRequests) {
  kv::testing::ScratchDir dir;
  const auto conv = make_prompt(150, 4);
  ASSERT_TRUE(run_one(with_disk(dir.path()), conv, 2).out.finished);
  FakeEngine eng(small_blocks());
  LoopCore core(eng, with_disk(dir.path()));
  core.disk_tier()->set_load_delay(std::chrono::milliseconds(400));
  Driver d(core);
  const uint64_t slow = d.submit(greedy(conv, 4));
  const uint64_t other = d.submit(greedy(make_prompt(40, 5), 8));
  d.step();
  ASSERT_EQ(d.handles[slow]->state(), RequestState::Loading);
  // While the load sleeps, the other request runs to its end.
  while (!d.out[other].finished) {
    d.step();
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
  }
  EXPECT_EQ(d.handles[slow]->state(), RequestState::Loading);
  EXPECT_EQ(core.metrics().loading_requests, 1);
  for (const auto& c : eng.steps()) {
    for (const auto& s : c.seqs) EXPECT_NE(s.request_id, slow) << "a loading request ran";
  }
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[slow].tokens, eng.reference(conv, 4, false));
  EXPECT_EQ(d.out[slow].final.stats.cached_tokens, 9 * 16);
  EXPECT_LT(core.metrics().step_io_wait_seconds, 0.2) << "the loop waited for the disk";
}

TEST(DiskTier, CancelWhileLoadingFreesEveryBlock) {
  kv::testing::ScratchDir dir;
  const auto conv = make_prompt(150, 6);
  ASSERT_TRUE(run_one(with_disk(dir.path()), conv, 2).out.finished);
  FakeEngine eng(small_blocks());
  LoopCore core(eng, with_disk(dir.path()));
  core.disk_tier()->set_load_delay(std::chrono::milliseconds(200));
  Driver d(core);
  const uint64_t id = d.submit(greedy(conv, 4));
  d.step();
  ASSERT_EQ(d.handles[id]->state(), RequestState::Loading);
  d.handles[id]->cancel();
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[id].final.reason, FinishReason::Cancelled);
  // The load still finishes on its thread; its blocks are freed when the loop collects it.
  for (int i = 0; i < 2000 && core.table_refs() > 0; ++i) {
    d.step();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(core.table_refs(), 0);
  EXPECT_EQ(core.pool().used(), 0);
}

TEST(DiskTier, TwoRequestsNeedingTheSameBlocksBothGetThem) {
  kv::testing::ScratchDir dir;
  const auto conv = make_prompt(150, 7);
  ASSERT_TRUE(run_one(with_disk(dir.path()), conv, 2).out.finished);
  FakeEngine eng(small_blocks());
  LoopCore core(eng, with_disk(dir.path()));
  Driver d(core);
  auto a = conv, b = conv;
  a.push_back(11);
  b.push_back(12);
  const uint64_t ia = d.submit(greedy(a, 5)), ib = d.submit(greedy(b, 5));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[ia].tokens, eng.reference(a, 5, false));
  EXPECT_EQ(d.out[ib].tokens, eng.reference(b, 5, false));
  EXPECT_GE(d.out[ia].final.stats.cached_tokens, 9 * 16);
  EXPECT_GE(d.out[ib].final.stats.cached_tokens, 9 * 16);
}

TEST(DiskTier, ADamagedFileIsSkippedAndThePrefixRecomputed) {
  kv::testing::ScratchDir dir;
  const auto conv = make_prompt(150, 8);
  ASSERT_TRUE(run_one(with_disk(dir.path()), conv, 2).out.finished);
  int damaged = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    if (e.path().extension() != ".kvseg") continue;
    std::fstream f(e.path(), std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(-5, std::ios::end);  // inside the last block's data
    f.put('\x7f');
    ++damaged;
  }
  ASSERT_EQ(damaged, 1);
  const auto warm = run_one(with_disk(dir.path()), conv, 4);
  ASSERT_TRUE(warm.out.finished);
  EXPECT_EQ(warm.out.tokens, FakeEngine(small_blocks()).reference(conv, 4, false));
  EXPECT_EQ(warm.metrics.kv_disk_errors_total.at("checksum"), 1u);
  // Blocks before the damaged one were still good and used.
  EXPECT_EQ(warm.out.final.stats.cached_tokens, 8 * 16);
}

TEST(DiskTier, TheDiskNeverHoldsMoreThanItsBudget) {
  kv::testing::ScratchDir dir;
  FakeEngine eng(small_blocks());
  SchedConfig c = with_disk(dir.path(), 2, 4);
  c.kv_disk_space_mb = 1;
  c.max_queue = 1000;
  LoopCore core(eng, c);
  Driver d(core);
  // A fake block is 64 bytes of data and 88 of header: a 600-token conversation takes ~5.6 KB,
  // so 240 of them overflow 1 MiB.
  for (int i = 0; i < 240; ++i) d.submit(greedy(make_prompt(600, 100 + i), 2));
  ASSERT_TRUE(d.run_until_done(400000));
  const auto m = core.metrics();
  EXPECT_LE(m.kv_disk_bytes, m.kv_disk_budget_bytes);
  EXPECT_GT(m.kv_disk_evicted_files_total, 0u);
  EXPECT_GT(m.kv_disk_saves_total, 200u);
}

TEST(DiskTier, ADiskThatFailsUnderneathCostsOnlyItsSaves) {
  kv::testing::ScratchDir dir;
  const std::string sub = dir.path() + "/tier";
  FakeEngine eng(small_blocks());
  LoopCore core(eng, with_disk(sub));
  // The directory vanishes and a file takes its name (as good as a read-only or full disk
  // for the writes, and possible even as root): every save fails.
  std::filesystem::remove_all(sub);
  std::ofstream(sub) << "x";
  Driver d(core);
  const auto conv = make_prompt(150, 9);
  const uint64_t id = d.submit(greedy(conv, 4));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[id].tokens, eng.reference(conv, 4, false));
  for (int i = 0; i < 2000 && core.table_refs() > 0; ++i) {
    d.step();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(core.table_refs(), 0) << "failed saves still hand their blocks back";
  const auto m = core.metrics();
  EXPECT_GE(m.kv_disk_errors_total.at("io"), 1u);
  EXPECT_EQ(m.kv_disk_saves_total, 0u);
  // The prefix is still served from RAM.
  const uint64_t again = d.submit(greedy(conv, 4));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[again].tokens, eng.reference(conv, 4, false));
  EXPECT_GE(d.out[again].final.stats.cached_tokens, 9 * 16);
}

TEST(DiskTier, ThePromptsLastPartialBlockStartsFromAStoredBlock) {
  kv::testing::ScratchDir dir;
  // 160 tokens = 10 full blocks; the answer makes the cold run compute all ten.
  const auto conv = make_prompt(160, 10);
  ASSERT_TRUE(run_one(with_disk(dir.path()), conv, 6).out.finished);
  // The same prompt again: positions 0..158 can come from disk (block 9 used for 15 of its 16
  // positions), only the last token is computed.
  const auto again = run_one(with_disk(dir.path()), conv, 6);
  ASSERT_TRUE(again.out.finished);
  EXPECT_EQ(again.out.tokens, FakeEngine(small_blocks()).reference(conv, 6, false));
  EXPECT_EQ(again.out.final.stats.cached_tokens, 159);
  // A prompt that leaves the stored sequence inside block 9 uses the matching positions only.
  auto edited = conv;
  edited.resize(152);
  edited.push_back(7);
  edited.push_back(8);
  const auto branch = run_one(with_disk(dir.path()), edited, 6);
  ASSERT_TRUE(branch.out.finished);
  EXPECT_EQ(branch.out.tokens, FakeEngine(small_blocks()).reference(edited, 6, false));
  EXPECT_EQ(branch.out.final.stats.cached_tokens, 152);
}

// Lets every held disk job go and collects the completions: every pin comes back.
void settle(Driver& d, const kv::testing::DiskGate& gate) {
  gate.open();
  ASSERT_TRUE(kv::testing::wait_idle(*d.core.disk_tier()));
  d.step();
  EXPECT_EQ(d.core.table_refs(), 0);
  EXPECT_EQ(d.core.pool().used(), 0);
  EXPECT_FALSE(gate.timed_out());
}

TEST(DiskTier, ADecoderTakesBackTheBlocksAQueuedSavePins) {
  kv::testing::ScratchDir dir(/*in_memory=*/true);
  FakeEngine eng(small_blocks());
  LoopCore core(eng, with_disk(dir.path(), 1, 1));  // 16 blocks
  kv::testing::DiskGate gate;
  gate.attach(*core.disk_tier());
  Driver d(core);
  d.submit(greedy(make_prompt(100, 20), 2));
  ASSERT_TRUE(d.run_until_done());
  // Its 6 full blocks wait for a save the gate holds, pinned.
  ASSERT_EQ(core.disk_tier()->jobs_in_flight(), 1u);
  ASSERT_EQ(core.table_refs(), 6);
  // 250 positions: all 16 blocks, the 6 pinned ones included, by the end.
  const auto prompt = make_prompt(100, 21);
  const uint64_t b = d.submit(greedy(prompt, 150));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[b].final.reason, FinishReason::Length) << d.out[b].final.error;
  EXPECT_EQ(d.out[b].tokens, eng.reference(prompt, 150, true));
  EXPECT_EQ(d.out[b].final.stats.parks, 0);
  // A decode row in every step from its first token to its last.
  EXPECT_EQ(testing::check_invariants(eng.steps(), d.prompt_len), "");
  EXPECT_EQ(core.metrics().kv_disk_saves_total, 0u) << "the held save was withdrawn";
  settle(d, gate);
}

TEST(DiskTier, ADecoderAloneWaitsParkedForTheBlocksALoadPins) {
  kv::testing::ScratchDir dir(/*in_memory=*/true);
  const auto conv = make_prompt(150, 22);
  ASSERT_TRUE(run_one(with_disk(dir.path()), conv, 2).out.finished);  // 9 blocks on disk
  FakeEngine eng(small_blocks());
  LoopCore core(eng, with_disk(dir.path(), 2, 1));  // 16 blocks
  kv::testing::DiskGate gate;
  gate.attach(*core.disk_tier());
  Driver d(core);
  const uint64_t c = d.submit(greedy(conv, 2));
  d.step();
  ASSERT_EQ(d.handles[c]->state(), RequestState::Loading);  // 10 blocks, its load held
  // 140 positions need 9 blocks: more than the 6 left, and the only other request is loading.
  const auto prompt = make_prompt(40, 23);
  const uint64_t b = d.submit(greedy(prompt, 100));
  for (int i = 0; i < 400 && !d.parked() && !d.out[b].finished; ++i) d.step();
  ASSERT_TRUE(d.parked()) << "the decoder short of blocks should wait parked";
  EXPECT_EQ(d.parked()->id, b);
  EXPECT_EQ(d.handles[c]->state(), RequestState::Loading);
  gate.open();  // the load finishes; so do the request behind it and then the parked one
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[b].final.reason, FinishReason::Length) << d.out[b].final.error;
  EXPECT_EQ(d.out[b].tokens, eng.reference(prompt, 100, true));
  EXPECT_EQ(d.out[c].tokens, eng.reference(conv, 2, true));
  EXPECT_EQ(d.out[c].final.stats.cached_tokens, 9 * 16);
  settle(d, gate);
}

}  // namespace
}  // namespace baton::sched
