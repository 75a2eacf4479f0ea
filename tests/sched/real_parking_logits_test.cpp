// Parking on the real engine, compared bit for bit: a long prompt parked three times for short
// requests (its blocks kept pinned, released to the prefix cache, or released and then partly
// evicted by the request that took its slot) must get exactly the logits (memcmp of every
// vector the engine returns for it, in order) and tokens of its unparked run. Batch invariance
// (docs/ARCHITECTURE.md) is what makes a resume, which chunks the prompt differently, reuses
// cached blocks and copies a partial tail block, indistinguishable from never parking.
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "engine/llama_engine.h"
#include "sched/harness.h"
#include "sched/loop_core.h"
#include "support/shared_files.h"

namespace baton::sched {
namespace {

using testing::greedy;
using testing::make_prompt;

constexpr int32_t kLongPrompt = 400;
constexpr int32_t kDecodeTokens = 12;

// Forwards everything to the real engine and records, per request, the logits it returned and
// the chunks it ran.
class RecordingEngine : public engine::Engine {
 public:
  struct Chunk {
    int32_t start_pos;
    int32_t n_tokens;
  };
  explicit RecordingEngine(engine::Engine& inner) : inner_(inner) {}
  engine::EngineInfo info() const override { return inner_.info(); }
  void allocate_kv(int32_t n_blocks) override { inner_.allocate_kv(n_blocks); }
  void forward(const engine::StepBatch& batch, engine::StepOutput& out) override {
    inner_.forward(batch, out);
    for (size_t i = 0; i < out.request_ids.size() && i < out.logits.size(); ++i) {
      logits[out.request_ids[i]].push_back(out.logits[i]);
    }
    for (const auto& c : batch.seqs) {
      chunks[c.request_id].push_back({c.start_pos, static_cast<int32_t>(c.tokens.size())});
    }
  }
  void copy_block(int32_t src, int32_t dst, int32_t n_tokens) override {
    inner_.copy_block(src, dst, n_tokens);
    ++copies;
  }
  std::span<uint8_t> kv_block(int32_t block) override { return inner_.kv_block(block); }

  std::map<uint64_t, std::vector<std::vector<float>>> logits;
  std::map<uint64_t, std::vector<Chunk>> chunks;
  int copies = 0;

 private:
  engine::Engine& inner_;
};

// A short request submitted once the long prompt has `at` positions computed: it parks the long
// one at that chunk boundary and holds the slot until it ends.
struct ShortRequest {
  int32_t at;
  int32_t prompt;
  int32_t max_tokens;
};

enum class Resume { Unparked, Pinned, FromCache, PartlyEvicted };

struct Variant {
  const char* name;
  int64_t park_ram_mb;
  std::vector<ShortRequest> shorts;
  Resume resume;
};

// ctx 512 with one slot sizes the pool at 41 blocks (656 positions). Chunks of 24 tokens park
// the long prompt in the middle of a block, so a released park leaves a partial tail block
// that the resume copies.
SchedConfig one_slot(int64_t park_ram_mb) {
  SchedConfig c;
  c.parallel = 1;
  c.ctx = 512;
  c.prefill_chunk = 24;
  c.mixed_prefill_chunk = 16;
  c.preempt_min_tokens = 24;
  c.preempt_max_per_request = 4;
  c.preempt_max_wait_s = 0;  // only the short requests decide when it parks
  c.park_ram_mb = park_ram_mb;
  return c;
}

struct Recorded {
  std::vector<std::vector<float>> logits;
  std::vector<int32_t> tokens;
  std::vector<RecordingEngine::Chunk> chunks;
  int32_t parks = 0;
  int32_t max_blocks_kept = 0;  // while parked
  int copies = 0;
  uint64_t evictions = 0;
};

std::optional<RequestStatus> status_of(const LoopCore& core, uint64_t id) {
  for (const auto& r : core.status().requests) {
    if (r.id == id) return r;
  }
  return std::nullopt;
}

Recorded run(engine::Engine& eng, const Variant& v, const std::vector<int32_t>& prompt) {
  RecordingEngine rec(eng);
  LoopCore core(rec, one_slot(v.park_ram_mb));
  auto big = core.submit(greedy(prompt, kDecodeTokens));
  std::shared_ptr<RequestHandle> small;
  testing::Outcome big_out, small_out;
  Recorded r;
  size_t next = 0;
  for (int step = 0; step < 5000 && !(big_out.finished && (!small || small_out.finished)); ++step) {
    const auto st = status_of(core, big->id());
    if (st && st->state == RequestState::Parked) {
      r.max_blocks_kept = std::max(r.max_blocks_kept, st->blocks_kept);
    }
    const bool slot_free = !small || small_out.finished;
    if (next < v.shorts.size() && slot_free && st && st->state == RequestState::Prefilling &&
        st->prompt_done >= v.shorts[next].at) {
      const auto& s = v.shorts[next];
      // No BOS: a prompt sharing no first token with the others copies no cached tail block,
      // so every copy_block counted is a resume of the long prompt.
      auto p = make_prompt(s.prompt, 100 + static_cast<int32_t>(next), eng.info().n_vocab);
      small = core.submit(greedy(p, s.max_tokens));
      small_out = {};
      ++next;
    }
    core.step();
    testing::drain_ready(*big, big_out);
    if (small) testing::drain_ready(*small, small_out);
  }
  EXPECT_TRUE(big_out.finished);
  EXPECT_EQ(big_out.final.reason, FinishReason::Length) << big_out.final.error;
  EXPECT_EQ(next, v.shorts.size()) << "not every short request was submitted";
  EXPECT_EQ(core.pool().used(), 0);
  r.logits = rec.logits[big->id()];
  r.tokens = big_out.tokens;
  r.chunks = rec.chunks[big->id()];
  r.parks = big_out.final.stats.parks;
  r.copies = rec.copies;
  r.evictions = core.metrics().kv_evictions_total;
  return r;
}

// Where each resume started, against the position it was parked at (chunks that start below
// the end of the previous one recompute what the prefix cache no longer had).
std::vector<std::pair<int32_t, int32_t>> restarts(const std::vector<RecordingEngine::Chunk>& cs) {
  std::vector<std::pair<int32_t, int32_t>> out;
  for (size_t i = 1; i < cs.size(); ++i) {
    const int32_t end = cs[i - 1].start_pos + cs[i - 1].n_tokens;
    if (cs[i].start_pos != end) out.emplace_back(cs[i].start_pos, end);
  }
  return out;
}

void expect_same_logits(const Recorded& parked, const Recorded& alone) {
  ASSERT_EQ(parked.logits.size(), alone.logits.size());
  for (size_t i = 0; i < alone.logits.size(); ++i) {
    ASSERT_EQ(parked.logits[i].size(), alone.logits[i].size()) << "logits row " << i;
    EXPECT_EQ(std::memcmp(parked.logits[i].data(), alone.logits[i].data(),
                          alone.logits[i].size() * sizeof(float)),
              0)
        << "logits row " << i << " differs";
  }
  EXPECT_EQ(parked.tokens, alone.tokens);
}

TEST(RealEngineParking, ThreeParksKeptDroppedOrPartlyEvictedGiveBitIdenticalLogits) {
  BATON_REQUIRE_SHARED(model, "models/stories260K.gguf");
  engine::EngineOptions opts;
  opts.threads = 2;  // default KV type (f16): what a server runs
  auto eng = engine::load_llama_engine(model.string(), opts);
  const int32_t n_vocab = eng->info().n_vocab;
  ASSERT_GE(eng->info().n_ctx_train, 512);
  auto prompt = make_prompt(kLongPrompt, 5, n_vocab);
  prompt[0] = 1;

  const Recorded alone = run(*eng, {"alone", 0, {}, Resume::Unparked}, prompt);
  ASSERT_EQ(alone.tokens.size(), static_cast<size_t>(kDecodeTokens));
  ASSERT_EQ(alone.logits.size(), static_cast<size_t>(kDecodeTokens));  // final chunk + decodes
  ASSERT_EQ(alone.parks, 0);

  const std::vector<ShortRequest> tiny = {{72, 12, 12}, {168, 12, 12}, {264, 12, 12}};
  // The first short request grows to 32 blocks; with 41 in the pool it evicts the deepest of the
  // 14 blocks the long prompt released at position 216 (least recently used), so the resume
  // reuses a shorter prefix and recomputes the rest.
  const std::vector<ShortRequest> evicting = {{216, 100, 412}, {288, 12, 12}, {360, 12, 12}};
  const Variant variants[] = {
      {"blocks kept pinned", 256, tiny, Resume::Pinned},
      {"blocks released to the prefix cache", 0, tiny, Resume::FromCache},
      {"blocks released, then partly evicted", 0, evicting, Resume::PartlyEvicted},
  };
  for (const auto& v : variants) {
    SCOPED_TRACE(v.name);
    const Recorded parked = run(*eng, v, prompt);
    EXPECT_EQ(parked.parks, 3);
    expect_same_logits(parked, alone);
    const auto rs = restarts(parked.chunks);
    if (v.resume == Resume::Pinned) {
      EXPECT_GT(parked.max_blocks_kept, 0);
      EXPECT_TRUE(rs.empty()) << "pinned blocks resume where they were";
      EXPECT_EQ(parked.copies, 0);
    } else if (v.resume == Resume::FromCache) {
      EXPECT_EQ(parked.max_blocks_kept, 0);
      EXPECT_TRUE(rs.empty()) << "everything released came back from the prefix cache";
      EXPECT_EQ(parked.copies, 3) << "each resume copies its partial tail block";
    } else {
      EXPECT_GT(parked.evictions, 0u);
      ASSERT_FALSE(rs.empty()) << "no resume found its prefix partly evicted";
      EXPECT_GT(rs.front().first, 0) << "the reused part";
      EXPECT_LT(rs.front().first, rs.front().second);
    }
  }
}

}  // namespace
}  // namespace baton::sched
