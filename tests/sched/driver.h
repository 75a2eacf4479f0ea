#pragma once
// Drives a LoopCore step by step on the test's thread, draining every request's events and
// checking after each step that the pool's references are exactly the block tables' (plus the
// disk tier's pins): no block leaks, none is freed while in use.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "engine/fake_engine.h"
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
    int64_t refs = 0;
    for (int32_t b = 0; b < core.pool().n_blocks(); ++b) refs += core.pool().refcount(b);
    ASSERT_EQ(refs, core.table_refs()) << "blocks not conserved";
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
