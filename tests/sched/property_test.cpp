// Seeded random workloads driven step by step: arrivals, prompt lengths (with shared prefixes),
// max tokens, EOG stops and cancellations. Every case must keep the step invariants, end every
// request with the tokens it would get alone, and return every KV block. The same workloads run
// again with the KV disk tier on: small RAM pools spill blocks to it and prefixes come back from
// it, while its loads and saves finish at seeded random steps (a disk the test steps by hand, so
// a case replays exactly). After every step every request that was decoding got its row unless
// it was parked or cancelled (no decoder waits for a disk swap), no loading request ran, and
// blocks are conserved.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <random>
#include <set>

#include "support/fake_engine.h"
#include "kv/disk_hooks.h"
#include "kv/disk_test_util.h"
#include "sched/driver.h"
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

// What the cases exercised, summed over them.
struct Tally {
  uint64_t kv_parks = 0;  // parked under KV pressure
  uint64_t preempts = 0;  // parked for a shorter request
  uint64_t disk_saves = 0;
  uint64_t disk_hits = 0;
  uint64_t disk_loaded_tokens = 0;
  uint64_t steps_loading_while_decoding = 0;    // a load in flight across a step with decode rows
  uint64_t steps_disk_busy_while_decoding = 0;  // any disk job in flight across such a step
};

std::map<uint64_t, RequestState> states(const LoopCore& core) {
  std::map<uint64_t, RequestState> m;
  for (const auto& r : core.status().requests) m[r.id] = r.state;
  return m;
}

// After one step with `rows` (request ids in its batch): every request decoding before it got
// its row, unless it was parked meanwhile or ended by its cancel; no request loading after it
// ran. "" when all hold.
std::string check_rows(const std::map<uint64_t, RequestState>& before,
                       const std::map<uint64_t, RequestState>& after,
                       const std::set<uint64_t>& rows, const std::set<uint64_t>& cancelled) {
  for (const auto& [id, state] : before) {
    if (state != RequestState::Decoding || rows.count(id)) continue;
    auto now = after.find(id);
    const std::string who = "request " + std::to_string(id);
    if (now == after.end()) {
      if (!cancelled.count(id)) return who + " ended without its decode row and uncancelled";
    } else if (now->second != RequestState::Parked) {
      return who + " was decoding and got no row (now " + state_name(now->second) + ")";
    }
  }
  for (const auto& [id, state] : after) {
    if (state == RequestState::Loading && rows.count(id)) {
      return "request " + std::to_string(id) + " ran while its prefix was loading";
    }
  }
  return "";
}

// The disk tier's jobs finish when the gate lets them go: each pending one with a 1 in 3 chance
// before a step, so a load or a save spans a few steps.
void release_at_random(const kv::testing::DiskGate& gate, const kv::DiskTier& tier,
                       std::mt19937& rng) {
  while (tier.jobs_in_flight() > 0 && std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
    ASSERT_TRUE(gate.release_one(tier)) << "a released disk job never finished";
  }
}

void check_outcomes(const Case& c, const engine::FakeEngine& eng, const std::vector<Live>& live) {
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
}

// Counts a step in which requests decoding before it got their rows while a load (or any disk
// job, `disk_busy`) was in flight across it.
void count_overlap(const std::map<uint64_t, RequestState>& before,
                   const std::map<uint64_t, RequestState>& after, const std::set<uint64_t>& rows,
                   bool disk_busy, Tally& tally) {
  const bool decoded = std::any_of(before.begin(), before.end(), [&](const auto& kv) {
    return kv.second == RequestState::Decoding && rows.count(kv.first);
  });
  const bool loading = std::any_of(after.begin(), after.end(), [&](const auto& kv) {
    auto b = before.find(kv.first);
    return kv.second == RequestState::Loading && b != before.end() &&
           b->second == RequestState::Loading;
  });
  tally.steps_loading_while_decoding += decoded && loading;
  tally.steps_disk_busy_while_decoding += decoded && disk_busy;
}

// A case's end: the step invariants over its whole run, every block back, every request's
// tokens its reference, the counters consistent; adds what it exercised to `tally`.
void check_case_end(const Case& c, const engine::FakeEngine& eng, const LoopCore& core,
                    const std::vector<Live>& live, const std::map<uint64_t, int32_t>& prompt_len,
                    int rejected, Tally& tally) {
  std::set<uint64_t> parked;
  for (const auto& l : live) {
    if (l.out.final.stats.parks > 0) parked.insert(l.handle->id());
  }
  EXPECT_EQ(testing::check_invariants(eng.steps(), prompt_len, parked), "");
  EXPECT_EQ(core.pool().used(), 0) << "blocks still pinned";
  for (int32_t b = 0; b < core.pool().n_blocks(); ++b) ASSERT_EQ(core.pool().refcount(b), 0);
  check_outcomes(c, eng, live);
  Metrics m = core.metrics();
  EXPECT_EQ(m.requests_total["rejected"], static_cast<uint64_t>(rejected));
  EXPECT_EQ(m.requests_total["ok"] + m.requests_total["cancelled"], live.size());
  EXPECT_EQ(m.parked_requests, 0);
  EXPECT_EQ(m.loading_requests, 0);
  EXPECT_EQ(m.prefill_resumes_total, m.kv_preemptions_total + m.prefill_preemptions_total);
  for (const auto& [kind, n] : m.kv_disk_errors_total) EXPECT_EQ(n, 0u) << kind;
  tally.kv_parks += m.kv_preemptions_total;
  tally.preempts += m.prefill_preemptions_total;
  tally.disk_saves += m.kv_disk_saves_total;
  tally.disk_hits += m.kv_disk_hits_total;
  tally.disk_loaded_tokens += m.kv_disk_loaded_tokens_total;
}

// Runs the case of `seed`, with the disk tier on when `disk`, and adds to `tally`.
void run_case(uint32_t seed, bool disk, Tally& tally) {
  SCOPED_TRACE("seed " + std::to_string(seed) + (disk ? " with the disk tier" : ""));
  Case c = make_case(seed);
  std::optional<kv::testing::ScratchDir> dir;
  if (disk) {
    dir.emplace(/*in_memory=*/true);
    c.sched.prefix_cache = true;
    c.sched.kv_disk_dir = dir->path();
    c.sched.kv_disk_space_mb = 4;
  }
  engine::FakeEngine eng(c.engine);
  std::set<uint64_t> rows;
  eng.set_on_step([&](const engine::StepBatch& b) {
    for (const auto& s : b.seqs) rows.insert(s.request_id);
  });
  LoopCore core(eng, c.sched);
  kv::testing::DiskGate gate;  // after the core: opens before the tier stops
  kv::DiskTier* tier = core.disk_tier();
  ASSERT_EQ(tier != nullptr, disk);
  if (tier) gate.attach(*tier);
  std::mt19937 disk_rng(seed * 7919u + 1);
  std::vector<Live> live;
  std::map<uint64_t, int32_t> prompt_len;
  std::set<uint64_t> cancelled;
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
      if (l.plan->cancel_step != step) continue;
      l.handle->cancel();
      cancelled.insert(l.handle->id());
    }
    if (tier) release_at_random(gate, *tier, disk_rng);
    if (::testing::Test::HasFatalFailure()) return;
    const auto before = states(core);
    const bool disk_busy = tier && tier->jobs_in_flight() > 0;
    rows.clear();
    const bool worked = core.step();
    ASSERT_EQ(testing::check_blocks(core), "") << "step " << step;
    const auto after = states(core);
    ASSERT_EQ(check_rows(before, after, rows, cancelled), "") << "step " << step;
    count_overlap(before, after, rows, disk_busy && tier->jobs_in_flight() > 0, tally);
    // Nothing ran: only the disk can move things on.
    if (!worked && tier && tier->jobs_in_flight() > 0) {
      ASSERT_TRUE(gate.release_one(*tier));
    }
    all_done = step > 30;
    for (auto& l : live) {
      testing::drain_ready(*l.handle, l.out);
      all_done = all_done && l.out.finished;
    }
  }
  ASSERT_TRUE(all_done) << "a request never ended";
  if (tier) {  // the saves still queued hand their pins back once written
    gate.open();
    ASSERT_TRUE(kv::testing::wait_idle(*tier));
    core.step();
    EXPECT_FALSE(gate.timed_out()) << "a step waited for the disk";
  }
  eng.set_on_step({});
  check_case_end(c, eng, core, live, prompt_len, rejected, tally);
}

TEST(SchedProperty, RandomWorkloadsKeepEveryInvariant) {
  auto saved = log::level();
  log::set_level(log::Level::Warn);  // hundreds of cases: keep the output readable
  Tally t;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    run_case(seed, /*disk=*/false, t);
    if (::testing::Test::HasFatalFailure()) break;
  }
  log::set_level(saved);
  // Small pools make KV pressure common: the cases must exercise parking and resuming.
  EXPECT_GT(t.kv_parks, 0u);
  EXPECT_GT(t.preempts, 0u);
  std::cout << "parks across cases: " << t.kv_parks << " under KV pressure, " << t.preempts
            << " prefill preemptions\n";
}

TEST(SchedProperty, RandomWorkloadsWithTheDiskTierKeepEveryInvariant) {
  auto saved = log::level();
  log::set_level(log::Level::Warn);
  Tally t;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    run_case(seed, /*disk=*/true, t);
    if (::testing::Test::HasFatalFailure()) break;
  }
  log::set_level(saved);
  // The cases must swap through the disk while others decode, or they prove nothing.
  EXPECT_GT(t.disk_saves, 0u);
  EXPECT_GT(t.disk_hits, 0u);
  EXPECT_GT(t.disk_loaded_tokens, 0u);
  EXPECT_GT(t.steps_loading_while_decoding, 0u);
  EXPECT_GT(t.steps_disk_busy_while_decoding, 0u);
  EXPECT_GT(t.kv_parks, 0u);
  std::cout << "disk tier across cases: " << t.disk_saves << " segments saved, " << t.disk_hits
            << " prefixes found (" << t.disk_loaded_tokens << " tokens loaded), "
            << t.steps_loading_while_decoding << " steps decoding while a load was in flight, "
            << t.steps_disk_busy_while_decoding << " while any disk job was; " << t.kv_parks
            << " KV-pressure parks\n";
}

}  // namespace
}  // namespace baton::sched
