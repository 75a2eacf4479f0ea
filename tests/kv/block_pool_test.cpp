#include "kv/block_pool.h"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace baton::kv {
namespace {

constexpr int32_t kBs = 4;

std::vector<int32_t> seq(int32_t from, int32_t n) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), from);
  return v;
}

// Simulates a request that computed `tokens` into fresh blocks, committed them and ended.
std::vector<int32_t> store(BlockPool& pool, const std::vector<int32_t>& tokens) {
  std::vector<int32_t> table;
  uint64_t h = pool.root_hash();
  size_t pos = 0;
  for (; pos + kBs <= tokens.size(); pos += kBs) {
    int32_t b = *pool.allocate();
    table.push_back(b);
    h = pool.commit_full(b, h, std::span(tokens).subspan(pos, kBs));
  }
  if (pos < tokens.size()) {
    int32_t b = *pool.allocate();
    table.push_back(b);
    pool.commit_partial(b, h, std::span(tokens).subspan(pos));
  }
  for (auto it = table.rbegin(); it != table.rend(); ++it) pool.release(*it);
  return table;
}

void release_match(BlockPool& pool, const PrefixMatch& m) {
  for (int32_t b : m.blocks) pool.release(b);
  if (m.tail_block >= 0) pool.release(m.tail_block);
}

TEST(BlockPool, AllocatesAllThenRefusesAndFrees) {
  BlockPool pool(3, kBs, 7);
  EXPECT_EQ(pool.available(), 3);
  auto a = pool.allocate(), b = pool.allocate(), c = pool.allocate();
  ASSERT_TRUE(a && b && c);
  EXPECT_FALSE(pool.allocate().has_value());
  EXPECT_EQ(pool.used(), 3);
  pool.release(*b);
  EXPECT_EQ(pool.available(), 1);
  EXPECT_EQ(*pool.allocate(), *b);
  EXPECT_THROW(pool.release(99), std::logic_error);
}

TEST(BlockPool, HashChainDependsOnParentAndTokens) {
  BlockPool pool(4, kBs, 1);
  auto t = seq(10, kBs);
  uint64_t h1 = pool.chain_hash(pool.root_hash(), t);
  EXPECT_EQ(h1, pool.chain_hash(pool.root_hash(), t));
  EXPECT_NE(h1, pool.chain_hash(pool.root_hash() + 1, t));
  t[3] = 99;
  EXPECT_NE(h1, pool.chain_hash(pool.root_hash(), t));
  BlockPool other(4, kBs, 2);  // another model fingerprint: another chain
  EXPECT_NE(h1, other.chain_hash(other.root_hash(), seq(10, kBs)));
}

TEST(BlockPool, LookupReusesFullBlocksButNeverTheWholePrompt) {
  BlockPool pool(8, kBs, 1);
  auto tokens = seq(100, 3 * kBs);
  auto table = store(pool, tokens);
  // Same prompt: two full blocks, then the third as a partial tail of kBs-1 tokens.
  PrefixMatch m = pool.lookup(tokens);
  EXPECT_EQ(m.blocks, std::vector<int32_t>(table.begin(), table.begin() + 2));
  EXPECT_EQ(m.full_tokens, 2 * kBs);
  EXPECT_EQ(m.tail_block, table[2]);
  EXPECT_EQ(m.tail_tokens, kBs - 1);
  EXPECT_EQ(m.reused_tokens(), 3 * kBs - 1);
  EXPECT_EQ(pool.refcount(table[0]), 1);
  release_match(pool, m);
  EXPECT_EQ(pool.refcount(table[0]), 0);
  EXPECT_EQ(pool.stats().queries, 1u);
  EXPECT_EQ(pool.stats().hits, 1u);
  EXPECT_EQ(pool.stats().reused_tokens, static_cast<uint64_t>(3 * kBs - 1));
  // A single-token prompt can reuse nothing.
  EXPECT_EQ(pool.peek(std::vector<int32_t>{100}), 0);
}

TEST(BlockPool, DivergingPromptStopsTheChain) {
  BlockPool pool(8, kBs, 1);
  auto tokens = seq(100, 3 * kBs);
  store(pool, tokens);
  auto other = tokens;
  other[kBs + 1] = 5;  // differs inside the second block
  other.push_back(1);
  PrefixMatch m = pool.lookup(other);
  EXPECT_EQ(m.full_tokens, kBs);
  // The second cached block still serves as a partial tail for its first token.
  EXPECT_EQ(m.tail_tokens, 1);
  release_match(pool, m);
}

TEST(BlockPool, PartialTailOfAFinishedRequest) {
  BlockPool pool(8, kBs, 1);
  auto conv = seq(1, kBs + 2);  // one full block + 2 tokens in a partial block
  auto table = store(pool, conv);
  auto next = conv;
  next.insert(next.end(), {50, 51, 52});  // the conversation continues
  PrefixMatch m = pool.lookup(next);
  EXPECT_EQ(m.full_tokens, kBs);
  EXPECT_EQ(m.tail_block, table[1]);
  EXPECT_EQ(m.tail_tokens, 2);
  release_match(pool, m);
  // A prompt that diverges inside the tail reuses the matching part only.
  auto fork = seq(1, kBs + 1);
  fork.insert(fork.end(), {77, 78});
  EXPECT_EQ(pool.peek(fork), kBs + 1);
}

TEST(BlockPool, SharesPrefixAcrossConversationsWithCommonSystemPrompt) {
  BlockPool pool(16, kBs, 1);
  auto system = seq(500, 2 * kBs);
  auto a = system;
  a.insert(a.end(), {1, 2, 3, 4, 5});
  auto a_table = store(pool, a);
  auto b = system;
  b.insert(b.end(), {9, 9, 9});
  PrefixMatch m1 = pool.lookup(b);
  PrefixMatch m2 = pool.lookup(b);
  EXPECT_EQ(m1.full_tokens, 2 * kBs);
  EXPECT_EQ(m1.blocks, m2.blocks);
  EXPECT_EQ(m1.blocks[0], a_table[0]);
  EXPECT_EQ(pool.refcount(m1.blocks[0]), 2);  // two live conversations share it
  EXPECT_EQ(m1.tail_block, -1);               // "9" matches no cached tail
  release_match(pool, m1);
  release_match(pool, m2);
  EXPECT_EQ(pool.refcount(a_table[0]), 0);
}

TEST(BlockPool, EvictsLeastRecentlyUsedCachedBlocksFirst) {
  BlockPool pool(4, kBs, 1);
  auto p1 = seq(10, 2 * kBs);
  auto p2 = seq(30, 2 * kBs);
  auto t1 = store(pool, p1);  // released deepest first: t1[1], t1[0]
  auto t2 = store(pool, p2);  // then t2[1], t2[0]
  EXPECT_EQ(pool.cached_unreferenced(), 4);
  EXPECT_EQ(pool.available(), 4);
  // Touch p1 again: its blocks become most recent.
  auto longer = p1;
  longer.push_back(0);
  release_match(pool, pool.lookup(longer));
  // The next two allocations evict p2's blocks (deepest first), not p1's.
  auto a = pool.allocate();
  auto b = pool.allocate();
  EXPECT_EQ(*a, t2[1]);
  EXPECT_EQ(*b, t2[0]);
  EXPECT_EQ(pool.stats().evictions, 2u);
  EXPECT_EQ(pool.peek(longer), 2 * kBs);
  auto p2_longer = p2;
  p2_longer.push_back(0);
  EXPECT_EQ(pool.peek(p2_longer), 0);
}

TEST(BlockPool, PinnedBlocksAreNeverEvicted) {
  BlockPool pool(2, kBs, 1);
  auto p = seq(10, kBs);
  p.push_back(1);
  store(pool, seq(10, kBs));
  PrefixMatch m = pool.lookup(p);
  ASSERT_EQ(m.blocks.size(), 1u);
  auto fresh = pool.allocate();
  ASSERT_TRUE(fresh);
  EXPECT_NE(*fresh, m.blocks[0]);
  EXPECT_FALSE(pool.allocate().has_value());
  release_match(pool, m);
  pool.release(*fresh);
}

TEST(BlockPool, DuplicateContentStaysUnnamedAndIsFreedPlainly) {
  BlockPool pool(4, kBs, 1);
  auto t = seq(10, kBs);
  int32_t a = *pool.allocate(), b = *pool.allocate();
  uint64_t ha = pool.commit_full(a, pool.root_hash(), t);
  uint64_t hb = pool.commit_full(b, pool.root_hash(), t);
  EXPECT_EQ(ha, hb);
  pool.release(a);
  pool.release(b);
  EXPECT_EQ(pool.cached_unreferenced(), 1);  // only `a` carries the name
  EXPECT_EQ(pool.available(), 4);
}

}  // namespace
}  // namespace baton::kv
