#include "kv/block_pool.h"

#include <xxhash.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace baton::kv {

BlockPool::BlockPool(int32_t n_blocks, int32_t block_size, uint64_t fingerprint)
    : block_size_(block_size), fingerprint_(fingerprint) {
  if (n_blocks <= 0 || block_size <= 0) {
    throw std::invalid_argument("kv block pool: need n_blocks > 0 and block_size > 0, got " +
                                std::to_string(n_blocks) + " and " + std::to_string(block_size));
  }
  blocks_.resize(static_cast<size_t>(n_blocks));
  free_.reserve(blocks_.size());
  // Popped from the back, so block 0 is handed out first (readable traces).
  for (int32_t b = n_blocks - 1; b >= 0; --b) free_.push_back(b);
}

int32_t BlockPool::refcount(int32_t block) const {
  if (block < 0 || block >= n_blocks()) return 0;
  return blocks_[block].refs;
}

uint64_t BlockPool::chain_hash(uint64_t parent, std::span<const int32_t> tokens) const {
  return XXH3_64bits_withSeed(tokens.data(), tokens.size_bytes(), parent);
}

void BlockPool::forget(int32_t block) {
  Meta& m = blocks_[block];
  if (m.named) {
    auto it = by_hash_.find(m.hash);
    if (it != by_hash_.end() && it->second == block) by_hash_.erase(it);
  }
  if (m.named || m.partial) {
    auto [lo, hi] = by_parent_.equal_range(m.parent);
    for (auto it = lo; it != hi; ++it) {
      if (it->second == block) {
        by_parent_.erase(it);
        break;
      }
    }
  }
  m.named = m.partial = false;
  m.tokens.clear();
}

std::optional<int32_t> BlockPool::allocate() {
  int32_t b;
  if (!free_.empty()) {
    b = free_.back();
    free_.pop_back();
  } else if (!lru_.empty()) {
    b = lru_.front();
    lru_.pop_front();
    blocks_[b].in_lru = false;
    forget(b);
    ++stats_.evictions;
  } else {
    return std::nullopt;
  }
  blocks_[b].refs = 1;
  return b;
}

void BlockPool::pin(int32_t block) {
  Meta& m = blocks_[block];
  if (m.in_lru) {
    lru_.erase(m.lru_pos);
    m.in_lru = false;
  }
  ++m.refs;
}

void BlockPool::retain(int32_t block) {
  if (block < 0 || block >= n_blocks() || (blocks_[block].refs == 0 && !cached(blocks_[block]))) {
    throw std::logic_error("kv block pool: retain of block " + std::to_string(block) +
                           " that is neither allocated nor cached");
  }
  pin(block);
}

void BlockPool::release(int32_t block) {
  if (block < 0 || block >= n_blocks() || blocks_[block].refs <= 0) {
    throw std::logic_error("kv block pool: release of block " + std::to_string(block) +
                           " that holds no reference");
  }
  Meta& m = blocks_[block];
  if (--m.refs > 0) return;
  if (cached(m)) {
    m.lru_pos = lru_.insert(lru_.end(), block);
    m.in_lru = true;
  } else {
    free_.push_back(block);
  }
}

std::pair<int32_t, int32_t> BlockPool::best_tail(uint64_t parent, std::span<const int32_t> next,
                                                 int32_t limit) const {
  int32_t best = -1, best_len = 0;
  auto [lo, hi] = by_parent_.equal_range(parent);
  for (auto it = lo; it != hi; ++it) {
    const auto& toks = blocks_[it->second].tokens;
    size_t n = std::min({toks.size(), next.size(), static_cast<size_t>(limit)});
    auto diff = std::mismatch(toks.begin(), toks.begin() + static_cast<ptrdiff_t>(n), next.begin());
    auto len = static_cast<int32_t>(diff.first - toks.begin());
    // Ties go to the lower id so results do not depend on hash-map order.
    if (len > best_len || (len == best_len && len > 0 && it->second < best)) {
      best = it->second;
      best_len = len;
    }
  }
  return {best, best_len};
}

BlockPool::Walk BlockPool::walk(std::span<const int32_t> prompt,
                                const ResumableAt& resumable) const {
  Walk w{{}, fingerprint_, {}};
  // At least the last prompt token is left to compute.
  const auto limit = static_cast<int32_t>(prompt.size()) - 1;
  int32_t pos = 0;
  while (pos + block_size_ <= limit) {
    auto toks = prompt.subspan(static_cast<size_t>(pos), static_cast<size_t>(block_size_));
    uint64_t h = chain_hash(w.hash, toks);
    auto it = by_hash_.find(h);
    // The name covers the whole prefix, but a 64-bit hash can collide: the block must also
    // follow the same parent and hold the same tokens.
    if (it == by_hash_.end() || blocks_[it->second].parent != w.hash ||
        !std::equal(toks.begin(), toks.end(), blocks_[it->second].tokens.begin())) {
      break;
    }
    w.blocks.push_back(it->second);
    w.hashes.push_back(h);
    w.hash = h;
    pos += block_size_;
  }
  if (resumable) {
    while (!w.blocks.empty() &&
           !resumable(w.hashes.back(), static_cast<int32_t>(w.blocks.size()) * block_size_)) {
      w.blocks.pop_back();
      w.hashes.pop_back();
    }
    w.hash = w.hashes.empty() ? fingerprint_ : w.hashes.back();
    return w;
  }
  if (limit > pos) {
    auto [b, len] = best_tail(w.hash, prompt.subspan(static_cast<size_t>(pos)), limit - pos);
    if (len > 0) {
      w.tail_block = b;
      w.tail_tokens = len;
    }
  }
  return w;
}

int32_t BlockPool::peek(std::span<const int32_t> prompt, const ResumableAt& resumable) const {
  Walk w = walk(prompt, resumable);
  return static_cast<int32_t>(w.blocks.size()) * block_size_ + w.tail_tokens;
}

PrefixMatch BlockPool::lookup(std::span<const int32_t> prompt, const ResumableAt& resumable) {
  Walk w = walk(prompt, resumable);
  PrefixMatch m;
  m.blocks = std::move(w.blocks);
  m.full_tokens = static_cast<int32_t>(m.blocks.size()) * block_size_;
  m.chain_hash = w.hash;
  m.tail_block = w.tail_block;
  m.tail_tokens = w.tail_tokens;
  for (int32_t b : m.blocks) pin(b);
  if (m.tail_block >= 0) pin(m.tail_block);
  ++stats_.queries;
  if (m.reused_tokens() > 0) ++stats_.hits;
  stats_.reused_tokens += static_cast<uint64_t>(m.reused_tokens());
  return m;
}

uint64_t BlockPool::commit_full(int32_t block, uint64_t parent, std::span<const int32_t> tokens) {
  if (static_cast<int32_t>(tokens.size()) != block_size_) {
    throw std::logic_error("kv block pool: commit_full needs exactly block_size tokens");
  }
  uint64_t h = chain_hash(parent, tokens);
  Meta& m = blocks_[block];
  if (m.named || by_hash_.count(h)) return h;  // already named (shared or duplicate content)
  if (m.partial) forget(block);
  m.named = true;
  m.hash = h;
  m.parent = parent;
  m.tokens.assign(tokens.begin(), tokens.end());
  by_hash_[h] = block;
  by_parent_.emplace(parent, block);
  return h;
}

void BlockPool::commit_partial(int32_t block, uint64_t parent, std::span<const int32_t> tokens) {
  Meta& m = blocks_[block];
  if (tokens.empty() || static_cast<int32_t>(tokens.size()) >= block_size_ || m.named) return;
  auto [best, len] = best_tail(parent, tokens, static_cast<int32_t>(tokens.size()));
  if (best >= 0 && len == static_cast<int32_t>(tokens.size())) return;  // already covered
  if (m.partial) forget(block);
  m.partial = true;
  m.parent = parent;
  m.tokens.assign(tokens.begin(), tokens.end());
  by_parent_.emplace(parent, block);
}

}  // namespace baton::kv
