// Seeded random workloads driven step by step: arrivals, prompt lengths (with shared prefixes),
// max tokens, EOG stops and cancellations. Every case must keep the step invariants, end every
// request with the tokens it would get alone, and return every KV block.
#include <gtest/gtest.h>

#include <iostream>
#include <random>

#include "engine/fake_engine.h"
#include "sched/harness.h"
#include "sched/loop_core.h"
#include "util/log.h"

namespace baton::sched {
namespace {

using testing::Outcome;

struct Planned {
  int arrival_step;
  int cancel_step;  // -1 = never
  GenerateRequest req;
};

struct Case {
  engine::FakeEngineConfig engine;
  SchedConfig sched;
  std::vector<Planned> requests;
};

Case make_case(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Case c;
  c.engine.n_vocab = 64;
  c.engine.block_size = pick(0, 1) ? 4 : 16;
  c.engine.kv_bytes_per_block = 1 << 16;  // 16 blocks per MiB
  c.sched.parallel = pick(1, 4);
  c.sched.prefill_chunk = std::vector<int>{16, 64, 128, 2048}[pick(0, 3)];
  c.sched.mixed_prefill_chunk = std::vector<int>{8, 32, 128}[pick(0, 2)];
  c.sched.kv_ram_mb = pick(1, 6);
  c.sched.prefix_cache = pick(0, 3) != 0;
  c.sched.aging_steps = pick(1, 6);
  c.sched.ctx = 1024;
  c.sched.prefill_preempt = pick(0, 2) != 0;
  c.sched.preempt_min_tokens = pick(0, 64);
  c.sched.preempt_max_per_request = pick(1, 4);
  c.sched.preempt_max_wait_s = 0;  // wall-clock: its own test covers it
  c.sched.park_ram_mb = pick(0, 2);
  std::vector<std::vector<int32_t>> prefixes;
  for (int i = 0; i < 3; ++i)
    prefixes.push_back(testing::make_prompt(pick(1, 80), pick(0, 999), 64));
  const int n = pick(1, 12);
  for (int i = 0; i < n; ++i) {
    Planned p;
    p.arrival_step = pick(0, 30);
    p.cancel_step = pick(0, 4) == 0 ? p.arrival_step + pick(0, 20) : -1;
    std::vector<int32_t> prompt;
    if (pick(0, 1)) prompt = prefixes[pick(0, 2)];
    auto tail = testing::make_prompt(pick(1, 150), pick(0, 999), 64);
    prompt.insert(prompt.end(), tail.begin(), tail.end());
    p.req = testing::greedy(prompt, pick(1, 40), /*ignore_eos=*/pick(0, 1) == 0);
    c.requests.push_back(std::move(p));
  }
  return c;
}

struct Live {
  std::shared_ptr<RequestHandle> handle;
  Outcome out;
  const Planned* plan;
};

int64_t pool_refs(const kv::BlockPool& pool) {
  int64_t n = 0;
  for (int32_t b = 0; b < pool.n_blocks(); ++b) n += pool.refcount(b);
  return n;
}

// Adds how many times requests of this case were parked, under KV pressure and for a short one.
void run_case(uint32_t seed, uint64_t& kv_parks, uint64_t& preempts) {
  SCOPED_TRACE("seed " + std::to_string(seed));
  Case c = make_case(seed);
  engine::FakeEngine eng(c.engine);
  LoopCore core(eng, c.sched);
  std::vector<Live> live;
  std::map<uint64_t, int32_t> prompt_len;
  int rejected = 0;
  bool all_done = false;
  for (int step = 0; step < 20000 && !all_done; ++step) {
    for (const auto& p : c.requests) {
      if (p.arrival_step != step) continue;
      try {
        auto h = core.submit(p.req);
        prompt_len[h->id()] = static_cast<int32_t>(p.req.prompt.size());
        live.push_back({h, {}, &p});
      } catch (const SubmitError& e) {
        ASSERT_EQ(e.code, SubmitError::Code::TooLong) << e.what();
        ++rejected;
      }
    }
    for (auto& l : live) {
      if (l.plan->cancel_step == step) l.handle->cancel();
    }
    core.step();
    ASSERT_EQ(pool_refs(core.pool()), core.table_refs()) << "blocks not conserved, step " << step;
    all_done = step > 30;
    for (auto& l : live) {
      testing::drain_ready(*l.handle, l.out);
      all_done = all_done && l.out.finished;
    }
  }
  ASSERT_TRUE(all_done) << "a request never ended";
  std::set<uint64_t> parked;
  for (const auto& l : live) {
    if (l.out.final.stats.parks > 0) parked.insert(l.handle->id());
  }
  EXPECT_EQ(testing::check_invariants(eng.steps(), prompt_len, parked), "");
  EXPECT_EQ(core.pool().used(), 0) << "blocks still pinned";
  for (int32_t b = 0; b < core.pool().n_blocks(); ++b) ASSERT_EQ(core.pool().refcount(b), 0);
  for (const auto& l : live) {
    const auto& req = l.plan->req;
    auto ref = eng.reference(req.prompt, req.max_tokens, req.ignore_eos);
    if (!req.ignore_eos && !ref.empty() && ref.back() == c.engine.eog_id) ref.pop_back();
    const auto& got = l.out.tokens;
    ASSERT_LE(got.size(), ref.size());
    EXPECT_TRUE(std::equal(got.begin(), got.end(), ref.begin())) << "request " << l.handle->id();
    const FinishReason why = l.out.final.reason;
    if (why == FinishReason::Stop || why == FinishReason::Length) {
      EXPECT_EQ(got.size(), ref.size()) << "request " << l.handle->id();
    } else {
      EXPECT_EQ(why, FinishReason::Cancelled) << l.out.final.error;
    }
    EXPECT_EQ(l.out.final.stats.generated_tokens, static_cast<int32_t>(got.size()));
  }
  Metrics m = core.metrics();
  EXPECT_EQ(m.requests_total["rejected"], static_cast<uint64_t>(rejected));
  EXPECT_EQ(m.requests_total["ok"] + m.requests_total["cancelled"], live.size());
  EXPECT_EQ(m.parked_requests, 0);
  kv_parks += m.kv_preemptions_total;
  preempts += m.prefill_preemptions_total;
  EXPECT_EQ(m.prefill_resumes_total, m.kv_preemptions_total + m.prefill_preemptions_total);
}

TEST(SchedProperty, RandomWorkloadsKeepEveryInvariant) {
  auto saved = log::level();
  log::set_level(log::Level::Warn);  // hundreds of cases: keep the output readable
  uint64_t kv_parks = 0, preempts = 0;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    run_case(seed, kv_parks, preempts);
    if (::testing::Test::HasFatalFailure()) break;
  }
  log::set_level(saved);
  // Small pools make KV pressure common: the cases must exercise parking and resuming.
  EXPECT_GT(kv_parks, 0u);
  EXPECT_GT(preempts, 0u);
  std::cout << "parks across cases: " << kv_parks << " under KV pressure, " << preempts
            << " prefill preemptions\n";
}

}  // namespace
}  // namespace baton::sched
