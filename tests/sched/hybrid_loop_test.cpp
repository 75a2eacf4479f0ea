// The engine loop over hybrid recurrent models: a request's recurrent state covers its whole
// prefix and cannot be cut back to a block, so a request may reuse a cached prefix only up to a
// block after which a checkpoint of the state was taken, and starts its state from there. The
// recurrent fake engine fails any step that continues a request from a position its state does
// not hold, and any answer from a state that differs from the request's KV: a wrong reuse gets
// an error, never a plausible answer.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "engine/llama_engine.h"
#include "sched/driver.h"
#include "sched/engine_loop.h"
#include "sched/harness.h"
#include "sched/loop_core.h"
#include "support/fake_engine.h"
#include "support/shared_files.h"

namespace baton::sched {
namespace {

using engine::FakeEngine;
using testing::Driver;
using testing::greedy;
using testing::make_prompt;

engine::FakeEngineConfig recurrent_fake() {
  engine::FakeEngineConfig e = testing::small_blocks();
  e.recurrent = true;
  return e;
}

SchedConfig hybrid_config() {
  SchedConfig c;
  c.parallel = 2;
  c.ctx = 1024;
  c.prefill_chunk = 64;
  c.mixed_prefill_chunk = 16;
  return c;
}

// An agent's second turn resends the first turn's prompt and answer with more text after it.
std::vector<int32_t> next_turn(std::vector<int32_t> prompt, const std::vector<int32_t>& answer,
                               int32_t salt) {
  prompt.insert(prompt.end(), answer.begin(), answer.end());
  const auto more = make_prompt(37, salt);
  prompt.insert(prompt.end(), more.begin(), more.end());
  return prompt;
}

// Tokens the engine computed for a request (prefill positions and decode rows).
int64_t computed(const FakeEngine& eng, uint64_t id) {
  int64_t n = 0;
  const auto seen = testing::appearances(eng.steps());
  if (auto it = seen.find(id); it != seen.end()) {
    for (const auto& a : it->second) n += a.n_tokens;
  }
  return n;
}

// A second turn reuses the first turn's blocks up to the deepest checkpoint: with one every
// block, it computes only what follows the last full block of the first conversation's KV, and
// gets the reference tokens (a wrong state would fail the fake's checks or change them).
TEST(HybridLoop, ResentConversationComputesOnlyWhatFollowsItsLastCheckpoint) {
  FakeEngine eng(recurrent_fake());
  LoopCore core(eng, hybrid_config());
  EXPECT_TRUE(core.config().prefix_cache);
  EXPECT_EQ(core.checkpoint_every(), 1) << "a small state is checkpointed at every block";
  Driver d(core);
  const auto first = make_prompt(100, 1);
  const uint64_t a = d.submit(greedy(first, 20));
  ASSERT_TRUE(d.run_until_done());
  ASSERT_EQ(d.out[a].final.reason, FinishReason::Length) << d.out[a].final.error;
  EXPECT_EQ(d.out[a].tokens, eng.reference(first, 20, true));
  const auto second = next_turn(first, d.out[a].tokens, 2);
  const uint64_t b = d.submit(greedy(second, 20));
  // The same conversation twice at once, and its first turn again.
  const uint64_t c = d.submit(greedy(second, 20));
  const uint64_t again = d.submit(greedy(first, 20));
  ASSERT_TRUE(d.run_until_done());
  // The first turn's KV: its prompt and 19 decode rows (the last token's never ran): 119
  // positions, 7 full blocks with a checkpoint after each.
  for (uint64_t id : {b, c}) {
    EXPECT_EQ(d.out[id].final.reason, FinishReason::Length) << d.out[id].final.error;
    EXPECT_EQ(d.out[id].tokens, eng.reference(second, 20, true)) << "request " << id;
    EXPECT_EQ(d.out[id].final.stats.cached_tokens, 112) << "request " << id;
    EXPECT_EQ(computed(eng, id), static_cast<int64_t>(second.size()) - 112 + 19);
  }
  EXPECT_EQ(d.out[again].tokens, d.out[a].tokens);
  EXPECT_EQ(d.out[again].final.stats.cached_tokens, 96) << "its prompt's last token is computed";
  const Metrics m = core.metrics();
  EXPECT_EQ(m.prefill_tokens_total, first.size() + 2 * (second.size() - 112) + (100 - 96));
  EXPECT_EQ(m.requests_total.at("failed"), 0u);
  EXPECT_EQ(eng.restores(), 3);
  EXPECT_EQ(m.state_restores_total, 3u);
  EXPECT_EQ(m.state_checkpoints_taken_total, static_cast<uint64_t>(eng.checkpoints_taken()));
  EXPECT_GT(m.state_checkpoints, 0);
  EXPECT_EQ(m.state_checkpoint_bytes, m.state_checkpoints * 4096);
  EXPECT_EQ(eng.live_states(), 0u) << "every finished request's state is released";
  EXPECT_EQ(testing::check_invariants(eng.steps(), d.prompt_len), "");
}

// --state-checkpoint-blocks 4: checkpoints after blocks 4 and 8, and after each prompt's last
// full block; a resend computes at most 4 blocks more than a plain model would.
TEST(HybridLoop, CheckpointsEveryNBlocksAndAtTheEndOfEachPrompt) {
  FakeEngine eng(recurrent_fake());
  SchedConfig cfg = hybrid_config();
  cfg.state_checkpoint_blocks = 4;
  LoopCore core(eng, cfg);
  Driver d(core);
  const auto first = make_prompt(100, 1);
  const uint64_t a = d.submit(greedy(first, 20));
  ASSERT_TRUE(d.run_until_done());
  // Blocks 4 (position 64) and 6 (96, the prompt's last full block); 7 (112) is not taken.
  EXPECT_EQ(eng.checkpoints_taken(), 2);
  EXPECT_EQ(core.state_store()->n_held(), 2);
  const auto second = next_turn(first, d.out[a].tokens, 2);
  const uint64_t b = d.submit(greedy(second, 20));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[b].tokens, eng.reference(second, 20, true)) << d.out[b].final.error;
  EXPECT_EQ(d.out[b].final.stats.cached_tokens, 96);
  EXPECT_LE(static_cast<int64_t>(second.size()) - 96,
            (static_cast<int64_t>(second.size()) - 112) + 4 * 16);
  EXPECT_EQ(eng.live_states(), 0u);
}

// A state budget of a few checkpoints: conversations branching from each other's turns evict
// each other's checkpoints all the time. Every answer is the reference (the fake fails any
// step from a wrong state), some prefixes are reused, and some lookups fall back to a shallower
// checkpoint or to position 0.
TEST(HybridLoop, EvictedCheckpointsFallBackToAShallowerOneOrToTheStart) {
  engine::FakeEngineConfig e = recurrent_fake();
  e.state_bytes = (1 << 20) / 3;  // three checkpoints in 1 MB
  FakeEngine eng(e);
  SchedConfig cfg = hybrid_config();
  cfg.state_ram_mb = 1;
  LoopCore core(eng, cfg);
  ASSERT_EQ(core.state_store()->n_slots(), 3);
  Driver d(core);
  std::vector<std::vector<int32_t>> convs = {make_prompt(40, 1), make_prompt(70, 2)};
  int32_t reused = 0, partial = 0;
  for (int32_t round = 0; round < 12; ++round) {
    // A copy: convs grows below, which would leave a reference dangling.
    const auto base = convs[static_cast<size_t>(round * 7 % static_cast<int32_t>(convs.size()))];
    std::vector<uint64_t> ids;
    std::vector<std::vector<int32_t>> prompts;
    for (int32_t k = 0; k < 2; ++k) {
      auto p = base;
      const auto more = make_prompt(5 + 9 * k + round, 100 + round * 2 + k);
      p.insert(p.end(), more.begin(), more.end());
      prompts.push_back(p);
      ids.push_back(d.submit(greedy(p, 6)));
    }
    ASSERT_TRUE(d.run_until_done());
    for (size_t k = 0; k < ids.size(); ++k) {
      const auto& o = d.out[ids[k]];
      ASSERT_EQ(o.final.reason, FinishReason::Length) << o.final.error;
      ASSERT_EQ(o.tokens, eng.reference(prompts[k], 6, true)) << "round " << round;
      const int32_t cached = o.final.stats.cached_tokens;
      EXPECT_EQ(cached % 16, 0) << "a hybrid reuses whole blocks only";
      reused += cached > 0 ? 1 : 0;
      partial += cached > 0 && cached + 16 <= static_cast<int32_t>(base.size()) ? 1 : 0;
      auto next = prompts[k];
      next.insert(next.end(), o.tokens.begin(), o.tokens.end());
      if (convs.size() < 6) convs.push_back(next);
    }
  }
  EXPECT_GT(reused, 0);
  EXPECT_GT(partial, 0) << "some matches were cut back to a shallower checkpoint";
  EXPECT_GT(core.state_store()->stats().evictions, 0u);
  EXPECT_EQ(core.metrics().requests_total.at("failed"), 0u);
  EXPECT_EQ(eng.live_states(), 0u);
  EXPECT_EQ(testing::check_invariants(eng.steps(), d.prompt_len), "");
}

// --state-ram-mb 0 (or --no-prefix-cache): no checkpoints, so no reuse; every request computes
// its whole prompt and still gets the reference tokens.
TEST(HybridLoop, NoStateBudgetMeansNoPrefixReuse) {
  FakeEngine eng(recurrent_fake());
  SchedConfig cfg = hybrid_config();
  cfg.state_ram_mb = 0;
  LoopCore core(eng, cfg);
  EXPECT_FALSE(core.config().prefix_cache);
  EXPECT_EQ(core.state_store(), nullptr);
  Driver d(core);
  const auto first = make_prompt(100, 1);
  const uint64_t a = d.submit(greedy(first, 20));
  ASSERT_TRUE(d.run_until_done());
  const auto second = next_turn(first, d.out[a].tokens, 2);
  const uint64_t b = d.submit(greedy(second, 20));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[b].tokens, eng.reference(second, 20, true)) << d.out[b].final.error;
  EXPECT_EQ(d.out[b].final.stats.cached_tokens, 0);
  EXPECT_EQ(core.metrics().prefill_tokens_total, first.size() + second.size());
  EXPECT_EQ(eng.checkpoints_taken(), 0);
}

// The same conversation on a model without recurrent state reuses the first turn's blocks and
// its partial tail, past the last checkpoint a hybrid could use.
TEST(HybridLoop, APlainModelReusesThePrefixAndItsTail) {
  FakeEngine eng(testing::small_blocks());
  LoopCore core(eng, hybrid_config());
  EXPECT_TRUE(core.config().prefix_cache);
  EXPECT_EQ(core.state_store(), nullptr);
  Driver d(core);
  const auto first = make_prompt(100, 1);
  const uint64_t a = d.submit(greedy(first, 20));
  ASSERT_TRUE(d.run_until_done());
  const uint64_t b = d.submit(greedy(next_turn(first, d.out[a].tokens, 2), 20));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[b].final.stats.cached_tokens, 119);
}

// Steps until the disk tier has written every queued save (no pins left).
void settle_disk(Driver& d) {
  for (int i = 0; i < 5000 && d.core.table_refs() > 0; ++i) {
    d.step();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(d.core.table_refs(), 0);
}

SchedConfig disk_config(const std::string& dir) {
  SchedConfig c = hybrid_config();
  c.kv_disk_dir = dir;
  c.kv_disk_space_mb = 16;
  return c;
}

// A first server run answers `first` and writes its blocks (with their checkpoints) to `dir`;
// returns the answer, for the next turn's prompt.
std::vector<int32_t> first_run_saves(const std::string& dir, const std::vector<int32_t>& first) {
  FakeEngine eng(recurrent_fake());
  LoopCore core(eng, disk_config(dir));
  EXPECT_NE(core.disk_tier(), nullptr);
  if (core.disk_tier() == nullptr) return {};
  Driver d(core);
  const uint64_t a = d.submit(greedy(first, 5));
  EXPECT_TRUE(d.run_until_done());
  settle_disk(d);
  EXPECT_GT(core.disk_tier()->stats().saved_blocks, 0u);
  return d.out[a].tokens;
}

// --kv-disk-dir with a hybrid model: the tier stores each checkpoint with the block it ends, so
// after a restart (a fresh engine and loop over the same directory) the next turn loads its
// prefix up to the prompt's last full block, starts its state from the checkpoint stored there,
// and computes only the rest.
TEST(HybridLoop, DiskTierCarriesCheckpointsAcrossARestart) {
  const std::string dir = (baton::testing::scratch_dir() / "kv").string();
  const auto first = make_prompt(100, 3);
  const auto answer = first_run_saves(dir, first);
  ASSERT_FALSE(answer.empty());
  FakeEngine eng(recurrent_fake());
  LoopCore core(eng, disk_config(dir));
  Driver d(core);
  const auto second = next_turn(first, answer, 4);
  const uint64_t b = d.submit(greedy(second, 5));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[b].final.reason, FinishReason::Length) << d.out[b].final.error;
  EXPECT_EQ(d.out[b].tokens, eng.reference(second, 5, true));
  // The first prompt's last full block ends at 96: its checkpoint came back with the blocks.
  EXPECT_EQ(d.out[b].final.stats.cached_tokens, 96);
  EXPECT_EQ(computed(eng, b), static_cast<int64_t>(second.size()) - 96 + 4);
  EXPECT_EQ(core.metrics().kv_disk_hits_total, 1u);
  EXPECT_EQ(eng.restores(), 1);
}

// A checkpoint whose bytes were damaged on disk fails its checksum: the load brings nothing
// usable, the request computes its whole prompt and answers exactly, and the file is gone.
TEST(HybridLoop, ADamagedCheckpointOnDiskIsNeverUsed) {
  const std::string dir = (baton::testing::scratch_dir() / "kv").string();
  const auto first = make_prompt(100, 5);
  const auto answer = first_run_saves(dir, first);
  ASSERT_FALSE(answer.empty());
  // A segment's checkpoints are its last bytes: flip the last one of every segment.
  int damaged = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".kvseg") continue;
    std::fstream f(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-1, std::ios::end);
    const char c = static_cast<char>(f.get() ^ 0x5A);
    f.seekp(-1, std::ios::end);
    f.put(c);
    ++damaged;
  }
  ASSERT_GT(damaged, 0);
  FakeEngine eng(recurrent_fake());
  LoopCore core(eng, disk_config(dir));
  Driver d(core);
  const auto second = next_turn(first, answer, 6);
  const uint64_t b = d.submit(greedy(second, 5));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[b].final.reason, FinishReason::Length) << d.out[b].final.error;
  EXPECT_EQ(d.out[b].tokens, eng.reference(second, 5, true));
  EXPECT_EQ(d.out[b].final.stats.cached_tokens, 0);
  EXPECT_EQ(eng.restores(), 0);
  EXPECT_GT(core.disk_tier()->stats().errors.at("checksum"), 0u);
}

// With no room for checkpoints (--state-ram-mb 0) nothing stored could be continued: the tier
// stays off and every request computes its whole prompt.
TEST(HybridLoop, DiskTierStaysOffWithoutCheckpoints) {
  FakeEngine eng(recurrent_fake());
  SchedConfig c = disk_config((baton::testing::scratch_dir() / "kv").string());
  c.state_ram_mb = 0;
  LoopCore core(eng, c);
  EXPECT_EQ(core.disk_tier(), nullptr);
  EXPECT_FALSE(core.config().prefix_cache);
  Driver d(core);
  const auto p = make_prompt(50, 3);
  const uint64_t a = d.submit(greedy(p, 5));
  ASSERT_TRUE(d.run_until_done());
  EXPECT_EQ(d.out[a].tokens, eng.reference(p, 5, true));
}

// KV pressure parks requests mid-decode with their blocks released: they resume from the
// deepest checkpoint of their own sequence still cached (or 0). A prefill parked for a short
// request with its blocks kept continues its state where it stopped; with its blocks released,
// from its last checkpoint instead of position 0.
TEST(HybridLoop, ParkedRequestsResumeExactly) {
  {
    FakeEngine eng(recurrent_fake());
    SchedConfig c = hybrid_config();
    c.parallel = 4;
    c.kv_ram_mb = 1;  // 16 blocks: 256 positions for four requests of 140
    LoopCore core(eng, c);
    Driver d(core);
    std::vector<std::vector<int32_t>> ps;
    for (int i = 0; i < 4; ++i) ps.push_back(make_prompt(40, i));
    for (const auto& p : ps) d.submit(greedy(p, 100));
    ASSERT_TRUE(d.run_until_done());
    size_t i = 0;
    for (auto& [id, o] : d.out) {
      EXPECT_EQ(o.final.reason, FinishReason::Length) << o.final.error;
      EXPECT_EQ(o.tokens, eng.reference(ps[i++], 100, true)) << "request " << id;
    }
    EXPECT_GT(core.metrics().kv_preemptions_total, 0u);
    EXPECT_EQ(eng.live_states(), 0u);
  }
  for (int64_t park_ram_mb : {256, 0}) {
    SCOPED_TRACE(park_ram_mb ? "blocks kept pinned" : "blocks released");
    FakeEngine eng(recurrent_fake());
    SchedConfig c = hybrid_config();
    c.parallel = 1;
    c.ctx = 4096;
    c.preempt_min_tokens = 64;
    c.preempt_max_wait_s = 0;
    c.park_ram_mb = park_ram_mb;
    LoopCore core(eng, c);
    Driver d(core);
    const auto long_prompt = make_prompt(1000, 1);
    const uint64_t big = d.submit(greedy(long_prompt, 10));
    d.step();
    d.step();
    const uint64_t small = d.submit(greedy(make_prompt(10, 2), 5));
    ASSERT_TRUE(d.run_until_done());
    EXPECT_EQ(d.out[big].final.stats.parks, 1);
    EXPECT_EQ(d.out[big].tokens, eng.reference(long_prompt, 10, true)) << d.out[big].final.error;
    EXPECT_EQ(d.out[small].tokens, eng.reference(make_prompt(10, 2), 5, true));
    // Two 64-token chunks before the park, resumed at position 128 either way: the prompt is
    // computed once.
    EXPECT_EQ(computed(eng, big), 1000 + 9);
    EXPECT_EQ(eng.restores(), park_ram_mb ? 0 : 1);
    EXPECT_EQ(eng.live_states(), 0u);
  }
}

// The real engine on llama.cpp's qwen35moe file: requests batched and chunked with others, and
// a conversation resent to the same loop after its first turn ended, give the tokens of their
// runs alone (the engine refuses a step that would continue a state from a restored prefix).
TEST(HybridLoop, RealHybridModelAnswersAsWhenAlone) {
  BATON_REQUIRE_SHARED(model, "models/arch/synth-qwen35moe-Q8_0.gguf");
  engine::EngineOptions opts;
  opts.threads = 2;
  auto eng = engine::load_llama_engine(model.string(), opts);
  const int32_t n_vocab = eng->info().n_vocab;
  // Each wave is submitted once the previous one has finished, to the same loop.
  using Waves = std::vector<std::vector<std::vector<int32_t>>>;
  auto run = [&](const SchedConfig& c, const Waves& waves) {
    EngineLoop loop(*eng, c);
    loop.start();
    std::vector<testing::Outcome> out;
    for (const auto& wave : waves) {
      std::vector<std::shared_ptr<RequestHandle>> hs;
      for (const auto& p : wave) hs.push_back(loop.submit(greedy(p, 12)));
      for (auto& h : hs) out.push_back(testing::drain_all(*h, std::chrono::seconds(120)));
    }
    loop.shutdown();
    return out;
  };
  std::vector<std::vector<int32_t>> ps;
  for (int i = 0; i < 3; ++i) {
    auto p = make_prompt(30 + 17 * i, i, n_vocab);
    p[0] = 1;
    ps.push_back(p);
  }
  SchedConfig whole = hybrid_config();
  whole.parallel = 1;
  whole.prefill_chunk = 2048;
  std::vector<std::vector<int32_t>> solo;
  for (const auto& p : ps) {
    auto o = run(whole, {{p}});
    ASSERT_TRUE(o[0].finished);
    ASSERT_EQ(o[0].final.reason, FinishReason::Length) << o[0].final.error;
    solo.push_back(o[0].tokens);
  }
  auto second = next_turn(ps[0], solo[0], 9);
  for (int32_t& t : second) t %= n_vocab;
  const auto second_alone = run(whole, {{second}});
  SchedConfig mixed = hybrid_config();
  mixed.parallel = 4;
  mixed.prefill_chunk = 16;
  mixed.mixed_prefill_chunk = 5;
  auto got = run(mixed, {{ps[0], ps[1], ps[2]}, {second, ps[1]}});
  ASSERT_EQ(got.size(), 5u);
  for (const auto& o : got) EXPECT_EQ(o.final.reason, FinishReason::Length) << o.final.error;
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(got[i].tokens, solo[i]) << "prompt " << i;
  EXPECT_EQ(got[3].tokens, second_alone[0].tokens);
  EXPECT_GT(got[3].final.stats.cached_tokens, 0) << "the second turn starts from a checkpoint";
  EXPECT_EQ(got[4].tokens, solo[1]);
}

// What a request streamed: tokens, each one's logprob and its top alternatives' logprobs.
struct Scored {
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;  // the sampled token's, then its alternatives', per token
  Event final;
  bool finished = false;
};

Scored drain_scored(RequestHandle& h) {
  Scored o;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  Event e;
  while (!o.finished && std::chrono::steady_clock::now() < until) {
    if (!h.next(e, std::chrono::milliseconds(50))) continue;
    if (e.kind == Event::Kind::Finished) {
      o.finished = true;
      o.final = e;
      continue;
    }
    o.tokens.push_back(e.token.token);
    o.logprobs.push_back(e.token.logprob);
    for (const auto& [id, lp] : e.token.top) {
      o.tokens.push_back(id);
      o.logprobs.push_back(lp);
    }
  }
  return o;
}

// The real engine: a conversation's second turn, sent to the loop that ran its first turn,
// starts its state from the checkpoint at the first turn's last full block (taken at the end of
// a decode step) and computes only the rest; a branch off the first prompt starts from the one
// at the prompt's last full block, taken inside a prefill chunk. Their tokens and logprobs are
// bit for bit those of cold runs (a fresh loop, nothing cached, the state from position 0).
TEST(HybridLoop, RealHybridModelResumesAConversationFromACheckpointBitForBit) {
  BATON_REQUIRE_SHARED(model, "models/arch/synth-qwen35moe-Q8_0.gguf");
  engine::EngineOptions opts;
  opts.threads = 2;
  auto eng = engine::load_llama_engine(model.string(), opts);
  const int32_t n_vocab = eng->info().n_vocab;
  auto ask = [](std::vector<int32_t> p) {
    GenerateRequest r = greedy(std::move(p), 12);
    r.sampling.logprobs = true;
    r.sampling.top_logprobs = 4;
    return r;
  };
  auto first = make_prompt(70, 4, n_vocab);
  first[0] = 1;
  SchedConfig c = hybrid_config();
  c.prefill_chunk = 24;  // chunks 0..24, 24..48, 48..70: the checkpoint at 64 is inside one
  std::vector<std::vector<int32_t>> turns;
  std::vector<Scored> warm;
  {
    EngineLoop loop(*eng, c);
    loop.start();
    auto h = loop.submit(ask(first));
    Scored one = drain_scored(*h);
    ASSERT_TRUE(one.finished);
    ASSERT_EQ(one.final.reason, FinishReason::Length) << one.final.error;
    std::vector<int32_t> answer;
    for (size_t i = 0; i < one.tokens.size(); i += 5) answer.push_back(one.tokens[i]);
    turns.push_back(next_turn(first, answer, 9));
    std::vector<int32_t> branch(first.begin(), first.begin() + 66);
    const auto other = make_prompt(20, 11);
    branch.insert(branch.end(), other.begin(), other.end());
    turns.push_back(branch);
    for (auto& t : turns) {
      for (int32_t& id : t) id %= n_vocab;
      auto h2 = loop.submit(ask(t));
      warm.push_back(drain_scored(*h2));
    }
    loop.shutdown();
  }
  // The first turn's KV: 70 + 11 = 81 positions, 5 full blocks; the branch shares 4 of them.
  const int32_t expect_cached[] = {80, 64};
  for (size_t i = 0; i < turns.size(); ++i) {
    SCOPED_TRACE(i == 0 ? "second turn" : "branch");
    SchedConfig whole = hybrid_config();
    whole.prefill_chunk = 2048;
    EngineLoop loop(*eng, whole);
    loop.start();
    auto h = loop.submit(ask(turns[i]));
    Scored cold = drain_scored(*h);
    loop.shutdown();
    ASSERT_TRUE(warm[i].finished && cold.finished);
    ASSERT_EQ(warm[i].final.reason, FinishReason::Length) << warm[i].final.error;
    ASSERT_EQ(cold.final.reason, FinishReason::Length) << cold.final.error;
    EXPECT_EQ(warm[i].final.stats.cached_tokens, expect_cached[i]);
    EXPECT_EQ(cold.final.stats.cached_tokens, 0);
    EXPECT_EQ(warm[i].tokens, cold.tokens);
    ASSERT_EQ(warm[i].logprobs.size(), cold.logprobs.size());
    EXPECT_EQ(std::memcmp(warm[i].logprobs.data(), cold.logprobs.data(),
                          warm[i].logprobs.size() * sizeof(float)),
              0)
        << "a restored state gives other logprobs than one computed from position 0";
  }
}

}  // namespace
}  // namespace baton::sched
