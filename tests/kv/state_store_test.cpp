#include "kv/state_store.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "kv/block_pool.h"

namespace baton::kv {
namespace {

TEST(StateStore, ReservedSlotsAreNamedOnlyWhenTheStepSucceeds) {
  StateStore st(2);
  const int32_t a = *st.reserve();
  const int32_t b = *st.reserve();
  EXPECT_FALSE(st.reserve().has_value()) << "both slots are being written";
  st.commit(a, 0xA, 16);
  st.cancel(b);  // the step failed: b holds nothing
  EXPECT_EQ(st.find(0xA, 16), a);
  EXPECT_EQ(st.find(0xA, 32), -1) << "another length under the same name is not it";
  EXPECT_EQ(st.n_held(), 1);
  EXPECT_EQ(st.stats().taken, 1u);
  EXPECT_THROW(st.commit(b, 0xB, 16), std::logic_error) << "b is not reserved any more";
}

TEST(StateStore, EvictsTheLeastRecentlyUsedCheckpoint) {
  StateStore st(2);
  const int32_t a = *st.reserve();
  st.commit(a, 0xA, 16);
  const int32_t b = *st.reserve();
  st.commit(b, 0xB, 32);
  st.restored(a);  // a is now the most recent: b goes first
  const int32_t c = *st.reserve();
  EXPECT_EQ(c, b);
  EXPECT_EQ(st.find(0xB, 32), -1);
  EXPECT_EQ(st.find(0xA, 16), a);
  st.commit(c, 0xC, 48);
  EXPECT_EQ(st.stats().evictions, 1u);
  EXPECT_EQ(st.stats().restored, 1u);
}

TEST(StateStore, ADuplicateCheckpointFreesItsSlotAndADroppedOneIsForgotten) {
  StateStore st(3);
  const int32_t a = *st.reserve();
  const int32_t b = *st.reserve();
  st.commit(a, 0xA, 16);
  st.commit(b, 0xA, 16);  // two requests took the same prefix in one step
  EXPECT_EQ(st.find(0xA, 16), a);
  EXPECT_EQ(st.n_held(), 1);
  st.drop(a);
  EXPECT_EQ(st.find(0xA, 16), -1);
  EXPECT_EQ(st.n_held(), 0);
  // All three slots are free again.
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(st.reserve().has_value());
  EXPECT_FALSE(st.reserve().has_value());
}

TEST(StateStore, NoSlotsMeansNoCheckpoints) {
  StateStore st(0);
  EXPECT_FALSE(st.reserve().has_value());
  EXPECT_THROW(StateStore(-1), std::invalid_argument);
}

// A hybrid's prefix match ends at the deepest block with a checkpoint and takes no partial tail.
TEST(StateStore, PrefixMatchIsCutBackToTheDeepestCheckpointedBlock) {
  constexpr int32_t kBs = 4;
  BlockPool pool(16, kBs, 0x5EED);
  std::vector<int32_t> toks(14);
  std::iota(toks.begin(), toks.end(), 100);
  std::vector<uint64_t> hashes;
  std::vector<int32_t> table;
  uint64_t h = pool.root_hash();
  for (size_t pos = 0; pos + kBs <= toks.size(); pos += kBs) {
    const int32_t b = *pool.allocate();
    table.push_back(b);
    h = pool.commit_full(b, h, std::span(toks).subspan(pos, kBs));
    hashes.push_back(h);
  }
  const int32_t tail = *pool.allocate();
  pool.commit_partial(tail, h, std::span(toks).subspan(12, 2));
  for (int32_t b : table) pool.release(b);
  pool.release(tail);

  std::vector<int32_t> prompt = toks;
  prompt.push_back(7);
  EXPECT_EQ(pool.peek(prompt), 14) << "three blocks and the tail for a plain model";
  StateStore st(4);
  auto at = [&](uint64_t hash, int32_t n) { return st.find(hash, n) >= 0; };
  EXPECT_EQ(pool.peek(prompt, at), 0) << "no checkpoint: nothing is reusable";
  const int32_t s1 = *st.reserve();
  st.commit(s1, hashes[1], 8);
  EXPECT_EQ(pool.peek(prompt, at), 8);
  PrefixMatch m = pool.lookup(prompt, at);
  EXPECT_EQ(m.full_tokens, 8);
  EXPECT_EQ(m.blocks, std::vector<int32_t>(table.begin(), table.begin() + 2));
  EXPECT_EQ(m.chain_hash, hashes[1]);
  EXPECT_EQ(m.tail_block, -1);
  EXPECT_EQ(pool.refcount(table[2]), 0) << "the block past the cut stays unpinned";
  EXPECT_EQ(pool.stats().reused_tokens, 8u);
  for (int32_t b : m.blocks) pool.release(b);
}

}  // namespace
}  // namespace baton::kv
