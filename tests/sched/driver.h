#pragma once
// Drives a LoopCore step by step on the test's thread, draining every request's events and
// checking after each step that blocks are conserved (check_blocks): no block leaks, none is
// freed while in use.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "support/fake_engine.h"
#include "sched/harness.h"
#include "sched/loop_core.h"

namespace baton::sched::testing {

// 16-token blocks, 16 blocks per MiB of --kv-ram-mb: small pools in round numbers.
inline engine::FakeEngineConfig small_blocks() {
  engine::FakeEngineConfig e;
  e.block_size = 16;
  e.kv_bytes_per_block = 1 << 16;
  return e;
}

// Blocks are conserved: the pool's references are exactly the block tables' plus the disk
// tier's pins, and every block is either pinned (referenced), or cached or free (unreferenced):
// the blocks with a reference are the pool's used() ones. "" when both hold.
inline std::string check_blocks(const LoopCore& core) {
  const kv::BlockPool& pool = core.pool();
  int64_t refs = 0;
  int32_t pinned = 0;
  for (int32_t b = 0; b < pool.n_blocks(); ++b) {
    const int32_t n = pool.refcount(b);
    if (n < 0) return "block " + std::to_string(b) + " has refcount " + std::to_string(n);
    refs += n;
    pinned += n > 0 ? 1 : 0;
  }
  if (refs != core.table_refs()) {
    return "blocks not conserved: pool references " + std::to_string(refs) +
           ", block tables and disk pins " + std::to_string(core.table_refs());
  }
  if (pinned != pool.used()) {
    return std::to_string(pinned) + " blocks have references but the pool counts " +
           std::to_string(pool.used()) + " used (" + std::to_string(pool.cached_unreferenced()) +
           " cached, " + std::to_string(pool.available() - pool.cached_unreferenced()) +
           " free, of " + std::to_string(pool.n_blocks()) + ")";
  }
  return "";
}

struct Driver {
  explicit Driver(LoopCore& c) : core(c) {}
  LoopCore& core;
  std::map<uint64_t, std::shared_ptr<RequestHandle>> handles;
  std::map<uint64_t, Outcome> out;
  std::map<uint64_t, int32_t> prompt_len;

  uint64_t submit(GenerateRequest r) {
    auto n = static_cast<int32_t>(r.prompt.size());
    auto h = core.submit(std::move(r));
    handles[h->id()] = h;
    prompt_len[h->id()] = n;
    out[h->id()];
    return h->id();
  }
  bool last_worked = true;
  void step() {
    last_worked = core.step();
    for (auto& [id, h] : handles) drain_ready(*h, out[id]);
    ASSERT_EQ(check_blocks(core), "");
  }
  bool run_until_done(int max_steps = 20000) {
    for (int i = 0; i < max_steps; ++i) {
      bool all = true;
      for (auto& [id, o] : out) all = all && o.finished;
      if (all) return true;
      step();
      if (::testing::Test::HasFatalFailure()) return false;
      // Nothing to run: a disk load may be in flight on the tier's thread.
      if (!last_worked) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }
  std::optional<RequestStatus> parked() const {
    for (const auto& r : core.status().requests) {
      if (r.state == RequestState::Parked) return r;
    }
    return std::nullopt;
  }
};

}  // namespace baton::sched::testing
