#pragma once
// Bookkeeping of the KV block pool: which block ids are free, which are pinned by live requests
// (refcounts), and which hold a reusable prefix (hash chains). The KV storage itself lives in the
// engine; this class only names blocks. Only the engine-loop thread uses it.
//
// A full block is named by hash = xxh3_64(seed = parent hash, its tokens); the chain starts at
// the model fingerprint, so a hash names a whole prefix. Unreferenced cached blocks sit in an
// LRU list and are evicted (their name dropped) only when a fresh block is needed.
#include <cstdint>
#include <functional>
#include <list>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace baton::kv {

// The reusable prefix of a prompt, with every listed block pinned for the caller.
struct PrefixMatch {
  std::vector<int32_t> blocks;  // full blocks covering tokens [0, full_tokens)
  int32_t full_tokens = 0;
  uint64_t chain_hash = 0;  // hash of the last full block (the fingerprint when none)
  // A cached block whose first tail_tokens tokens equal the prompt tokens after full_tokens.
  // It is shared, so the caller copies those positions into a fresh block (copy-on-write) and
  // then releases tail_block.
  int32_t tail_block = -1;
  int32_t tail_tokens = 0;
  int32_t reused_tokens() const { return full_tokens + tail_tokens; }
};

// Hybrid models: whether a recurrent-state checkpoint exists after the full block named `hash`
// that ends at position n_pos. A match is cut back to the deepest such block and takes no
// partial tail (a state cannot be cut back to a shorter prefix).
using ResumableAt = std::function<bool(uint64_t hash, int32_t n_pos)>;

struct PoolStats {
  uint64_t queries = 0;
  uint64_t hits = 0;
  uint64_t reused_tokens = 0;
  uint64_t evictions = 0;
};

class BlockPool {
 public:
  BlockPool(int32_t n_blocks, int32_t block_size, uint64_t fingerprint);

  int32_t n_blocks() const { return static_cast<int32_t>(blocks_.size()); }
  int32_t block_size() const { return block_size_; }
  uint64_t root_hash() const { return fingerprint_; }
  // Blocks a caller can get now: never used, or cached but unreferenced (evictable).
  int32_t available() const { return static_cast<int32_t>(free_.size() + lru_.size()); }
  int32_t used() const { return n_blocks() - available(); }  // pinned by someone
  int32_t cached_unreferenced() const { return static_cast<int32_t>(lru_.size()); }
  // Blocks allocate() gives without evicting a cached prefix.
  int32_t free_uncached() const { return static_cast<int32_t>(free_.size()); }
  int32_t refcount(int32_t block) const;
  const PoolStats& stats() const { return stats_; }

  // A fresh block with refcount 1; evicts the least recently used cached block when no block
  // was never used. nullopt when every block is pinned.
  std::optional<int32_t> allocate();
  void retain(int32_t block);
  // Drops one reference; at zero a cached block goes to the LRU tail, an unnamed one to the
  // free list.
  void release(int32_t block);

  uint64_t chain_hash(uint64_t parent, std::span<const int32_t> tokens) const;

  // Longest cached prefix of `prompt`, never the whole prompt (its last token must be computed
  // to produce logits). Pins the returned blocks. Counts a query (and a hit when non-empty).
  // With `resumable`, the match ends at the deepest block it accepts (see ResumableAt).
  PrefixMatch lookup(std::span<const int32_t> prompt, const ResumableAt& resumable = {});
  // What lookup would reuse, without pinning or counting.
  int32_t peek(std::span<const int32_t> prompt, const ResumableAt& resumable = {}) const;

  // Names a full block holding `tokens` (block_size of them) after the prefix `parent`; returns
  // its hash. When another block already carries that name, this one stays unnamed.
  uint64_t commit_full(int32_t block, uint64_t parent, std::span<const int32_t> tokens);
  // Keeps a partially filled block (tokens.size() < block_size) as a partial-tail candidate
  // after the prefix `parent`. Skipped when an existing candidate already covers it.
  void commit_partial(int32_t block, uint64_t parent, std::span<const int32_t> tokens);

 private:
  struct Meta {
    int32_t refs = 0;
    bool named = false;    // full block in by_hash_
    bool partial = false;  // partial candidate in by_parent_
    uint64_t hash = 0;
    uint64_t parent = 0;
    std::vector<int32_t> tokens;  // contents when named or partial
    std::list<int32_t>::iterator lru_pos;
    bool in_lru = false;
  };
  bool cached(const Meta& m) const { return m.named || m.partial; }
  void forget(int32_t block);  // drops the name / candidacy
  void pin(int32_t block);
  // Best partial-tail candidate after `parent` matching a prefix of `next` (at most `limit`).
  std::pair<int32_t, int32_t> best_tail(uint64_t parent, std::span<const int32_t> next,
                                        int32_t limit) const;
  struct Walk {
    std::vector<int32_t> blocks;
    uint64_t hash;
    std::vector<uint64_t> hashes;  // of each block in `blocks`
    int32_t tail_block = -1;
    int32_t tail_tokens = 0;
  };
  Walk walk(std::span<const int32_t> prompt, const ResumableAt& resumable) const;

  int32_t block_size_;
  uint64_t fingerprint_;
  std::vector<Meta> blocks_;
  std::vector<int32_t> free_;  // never-named blocks, popped from the back
  std::list<int32_t> lru_;     // unreferenced cached blocks, least recent first
  std::unordered_map<uint64_t, int32_t> by_hash_;
  std::unordered_multimap<uint64_t, int32_t> by_parent_;  // full and partial blocks
  PoolStats stats_;
};

}  // namespace baton::kv
