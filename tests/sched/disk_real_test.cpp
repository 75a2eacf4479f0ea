// The KV disk tier on the real engine, a real trained model (F16 and F32 KV) and mixture-of-
// experts files: a
// conversation's prefix restored from disk by a freshly loaded engine (a restart) holds the very
// bytes the first engine computed (memcmp per block), and the answer built on it, token ids and
// log-probabilities, equals the answer of an engine that computed everything itself.
#include <gtest/gtest.h>

#include <cstring>

#include "engine/llama_engine.h"
#include "kv/disk_test_util.h"
#include "sched/harness.h"
#include "sched/loop_core.h"
#include "support/shared_files.h"

namespace baton::sched {
namespace {

using testing::make_prompt;

struct Answer {
  std::vector<TokenEvent> tokens;
  RequestStats stats;
};

// Steps `core` until the request ends (loads complete on the tier's thread meanwhile).
Answer answer(LoopCore& core, const std::vector<int32_t>& prompt, int32_t n) {
  GenerateRequest r = testing::greedy(prompt, n);
  r.sampling.logprobs = true;
  r.sampling.top_logprobs = 5;
  auto h = core.submit(std::move(r));
  Answer a;
  for (int i = 0; i < 20000; ++i) {
    if (!core.step()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    Event e;
    while (h->next(e, std::chrono::milliseconds(0))) {
      if (e.kind == Event::Kind::Token) {
        a.tokens.push_back(e.token);
      } else {
        EXPECT_EQ(e.reason, FinishReason::Length) << e.error;
        a.stats = e.stats;
        return a;
      }
    }
  }
  ADD_FAILURE() << "the request did not finish";
  return a;
}

// Waits until the tier has written everything queued (its pins are gone).
void settle(LoopCore& core) {
  for (int i = 0; i < 5000 && core.table_refs() > 0; ++i) {
    core.step();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(core.table_refs(), 0);
}

SchedConfig config(const std::string& dir) {
  SchedConfig c;
  c.parallel = 1;
  c.ctx = 512;
  c.prefill_chunk = 64;
  c.kv_ram_mb = 8;
  c.kv_disk_dir = dir;
  c.kv_disk_space_mb = dir.empty() ? 0 : 64;
  return c;
}

void expect_same_answer(const Answer& a, const Answer& b) {
  ASSERT_EQ(a.tokens.size(), b.tokens.size());
  for (size_t i = 0; i < a.tokens.size(); ++i) {
    EXPECT_EQ(a.tokens[i].token, b.tokens[i].token) << "token " << i;
    EXPECT_EQ(std::memcmp(&a.tokens[i].logprob, &b.tokens[i].logprob, sizeof(float)), 0)
        << "logprob of token " << i;
    EXPECT_EQ(a.tokens[i].top, b.tokens[i].top) << "alternatives of token " << i;
  }
}

void restore_across_restart(const char* file, const std::string& kv_type) {
  BATON_REQUIRE_SHARED(model, file);
  engine::EngineOptions opts;
  opts.threads = 2;
  opts.kv_type = kv_type;
  kv::testing::ScratchDir dir;
  auto first = engine::load_llama_engine(model.string(), opts);
  const int32_t n_vocab = first->info().n_vocab;
  auto conv = make_prompt(200, 21, n_vocab);
  conv[0] = 1;
  LoopCore core_a(*first, config(dir.path()));
  const Answer turn1 = answer(core_a, conv, 8);
  settle(core_a);
  auto turn2 = conv;
  for (const auto& t : turn1.tokens) turn2.push_back(t.token);
  const auto more = make_prompt(30, 22, n_vocab);
  turn2.insert(turn2.end(), more.begin(), more.end());

  auto restarted = engine::load_llama_engine(model.string(), opts);
  LoopCore core_b(*restarted, config(dir.path()));
  const Answer warm = answer(core_b, turn2, 8);
  EXPECT_EQ(core_b.metrics().kv_disk_hits_total, 1u);
  EXPECT_EQ(warm.stats.cached_tokens, 12 * 16) << "207 computed positions: 12 full blocks";

  auto cold_engine = engine::load_llama_engine(model.string(), opts);
  LoopCore core_c(*cold_engine, config(""));
  const Answer cold = answer(core_c, turn2, 8);
  EXPECT_EQ(cold.stats.cached_tokens, 0);
  expect_same_answer(warm, cold);

  // The restored blocks hold the bytes the first engine computed.
  kv::BlockPool& pool_a = const_cast<kv::BlockPool&>(core_a.pool());
  kv::BlockPool& pool_b = const_cast<kv::BlockPool&>(core_b.pool());
  const auto ma = pool_a.lookup(turn2), mb = pool_b.lookup(turn2);
  ASSERT_EQ(ma.blocks.size(), 12u);
  ASSERT_GE(mb.blocks.size(), 12u);
  for (size_t i = 0; i < ma.blocks.size(); ++i) {
    const auto ka = first->kv_block(ma.blocks[i]), kb = restarted->kv_block(mb.blocks[i]);
    ASSERT_EQ(ka.size(), kb.size());
    EXPECT_EQ(std::memcmp(ka.data(), kb.data(), ka.size()), 0) << "block " << i;
  }
}

TEST(DiskTierRealEngine, F16PrefixRestoredAfterARestartIsBitExact) {
  restore_across_restart("models/stories260K.gguf", "f16");
}

TEST(DiskTierRealEngine, F32PrefixRestoredAfterARestartIsBitExact) {
  restore_across_restart("models/stories260K.gguf", "f32");
}

// Mixture-of-experts files: the experts a restored row chooses give the cold answer. gpt-oss's
// windowed layers and qwen35moe's recurrent layers keep state outside the blocks: the tier
// stores the checkpoint taken at the end of the prompt's last full block with that block, and
// the restarted engine starts the sequence's state from it.
TEST(DiskTierRealEngine, Qwen3MoePrefixRestoredAfterARestartIsBitExact) {
  restore_across_restart("models/arch/synth-qwen3moe-Q8_0.gguf", "f16");
}

TEST(DiskTierRealEngine, GptOssPrefixRestoredAfterARestartIsBitExact) {
  restore_across_restart("models/arch/synth-gpt-oss-MXFP4_MOE.gguf", "f16");
}

TEST(DiskTierRealEngine, HybridPrefixRestoredAfterARestartIsBitExact) {
  restore_across_restart("models/arch/synth-qwen35moe-Q8_0.gguf", "f16");
}

}  // namespace
}  // namespace baton::sched
