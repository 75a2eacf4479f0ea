#pragma once
// Drives an engine the way the scheduler does: a target sequence's prompt split into chunks,
// each step batched with companion sequences that prefill or decode in their own blocks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/generate.h"
#include "engine/llama_engine.h"

namespace baton::testing {

class BlockAllocator {
 public:
  explicit BlockAllocator(int32_t first = 0) : next_(first) {}
  std::vector<int32_t> take(int32_t n) {
    std::vector<int32_t> v(n);
    std::iota(v.begin(), v.end(), next_);
    next_ += n;
    return v;
  }
  int32_t used() const { return next_; }

 private:
  int32_t next_;
};

inline int32_t blocks_for(int32_t n_tokens, int32_t block_size) {
  return (n_tokens + block_size - 1) / block_size;
}

// Runs `prompt` through the engine in chunks of `chunk` tokens (<= 0: whole), each step with
// `n_others` companions, and returns the logits after the last token. Blocks come from `alloc`.
inline std::vector<float> run_target(engine::Engine& eng, const std::vector<int32_t>& prompt,
                                     int chunk, int n_others, BlockAllocator& alloc,
                                     uint32_t seed) {
  const auto info = eng.info();
  std::mt19937 rng(seed);
  const size_t step = chunk <= 0 ? prompt.size() : static_cast<size_t>(chunk);
  const int32_t n_steps = static_cast<int32_t>((prompt.size() + step - 1) / step);
  engine::SeqChunk target;
  target.request_id = 1000;
  target.block_table = alloc.take(blocks_for(static_cast<int32_t>(prompt.size()), info.block_size));
  std::vector<engine::SeqChunk> others(n_others);
  for (int i = 0; i < n_others; ++i) {
    others[i].request_id = static_cast<uint64_t>(i + 1);
    others[i].block_table = alloc.take(blocks_for(n_steps * 9, info.block_size));
  }
  std::vector<float> result;
  for (size_t i = 0; i < prompt.size(); i += step) {
    const size_t n = std::min(step, prompt.size() - i);
    target.start_pos = static_cast<int32_t>(i);
    target.tokens.assign(prompt.begin() + i, prompt.begin() + i + n);
    target.want_logits = i + n == prompt.size();
    engine::StepBatch b;
    for (auto& o : others) {
      o.start_pos += static_cast<int32_t>(o.tokens.size());
      o.tokens.resize(1 + rng() % 9);
      for (auto& t : o.tokens) t = static_cast<int32_t>(rng() % info.n_vocab);
      o.want_logits = rng() % 2 == 0;
      b.seqs.push_back(o);
    }
    // The target's place in the batch moves around too.
    const size_t where = rng() % (b.seqs.size() + 1);
    b.seqs.insert(b.seqs.begin() + static_cast<int64_t>(where), target);
    engine::StepOutput out;
    eng.forward(b, out);
    for (size_t k = 0; k < out.request_ids.size(); ++k) {
      if (out.request_ids[k] == target.request_id) result = out.logits[k];
    }
  }
  return result;
}

inline bool bit_identical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && !a.empty() &&
         std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Token ids (i * 37 + 11) mod n_vocab: a prompt every model's vocabulary holds.
inline std::vector<int32_t> some_prompt(int n, int32_t n_vocab) {
  std::vector<int32_t> p(n);
  for (int i = 0; i < n; ++i) p[i] = static_cast<int32_t>((i * 37 + 11) % n_vocab);
  return p;
}

// The file at `path` loaded to run on `threads` threads.
inline std::unique_ptr<engine::LlamaEngine> load_engine(const std::string& path, int threads) {
  engine::EngineOptions opts;
  opts.threads = threads;
  return engine::load_llama_engine(path, opts);
}

// The logits after the last token of an `n_prompt`-token prompt, run whole on two threads.
inline std::vector<float> first_logits(const std::string& path, int n_prompt = 24,
                                       bool interleave = true) {
  engine::EngineOptions opts;
  opts.threads = 2;
  opts.interleave_weights = interleave;
  auto eng = engine::load_llama_engine(path, opts);
  engine::GenerateOptions g;
  g.max_tokens = 0;
  return engine::generate(*eng, some_prompt(n_prompt, eng->info().n_vocab), g).first_logits;
}

inline double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += double(a[i]) * b[i];
    aa += double(a[i]) * a[i];
    bb += double(b[i]) * b[i];
  }
  return ab / std::sqrt(aa * bb);
}

// The logits after the last token of `prompt`, run whole as the only sequence of its step.
inline std::vector<float> last_logits(engine::Engine& eng, const std::vector<int32_t>& prompt,
                                      int chunk) {
  BlockAllocator alloc;
  return run_target(eng, prompt, chunk, 0, alloc, 1);
}

// A 70-token prompt's logits on the file at `path` are bit-identical alone, chunked (1 to 64
// tokens, or whole) and beside 0 to 8 other sequences, at `threads` threads (a gtest
// expectation per arrangement; `seed` draws the companions).
inline void expect_chunkings_invariant(const std::string& path, int threads, uint32_t seed) {
  engine::EngineOptions opts;
  opts.threads = threads;
  auto eng = engine::load_llama_engine(path, opts);
  eng->allocate_kv(2048);
  const auto prompt = some_prompt(70, eng->info().n_vocab);
  BlockAllocator alloc;
  const auto ref = run_target(*eng, prompt, 0, 0, alloc, 1);
  ASSERT_EQ(ref.size(), static_cast<size_t>(eng->info().n_vocab));
  for (float v : ref) ASSERT_TRUE(std::isfinite(v));
  for (auto [chunk, others] : {std::pair{1, 3}, {5, 0}, {7, 5}, {16, 8}, {64, 2}, {0, 4}}) {
    BlockAllocator fresh(alloc.used());
    const auto got = run_target(*eng, prompt, chunk, others, fresh, seed++);
    EXPECT_TRUE(bit_identical(ref, got))
        << path << " threads " << threads << " chunk " << chunk << " others " << others;
  }
}

// A 40-token prompt on the file at `model` gives bit-identical logits alone and beside other
// sequences, whole or in chunks (a gtest expectation per arrangement; `label` names the file).
inline void expect_file_batch_invariant(const std::string& model, const std::string& label,
                                        engine::EngineOptions opts = {}) {
  opts.threads = 2;
  auto eng = engine::load_llama_engine(model, opts);
  eng->allocate_kv(512);
  std::vector<int32_t> prompt(40);
  for (size_t i = 0; i < prompt.size(); ++i) prompt[i] = int32_t((i * 37 + 11) % 512);
  BlockAllocator alloc;
  const auto ref = run_target(*eng, prompt, 0, 0, alloc, 1);
  uint32_t seed = 2;
  for (auto [chunk, others] : {std::pair{1, 2}, std::pair{7, 5}, std::pair{0, 3}}) {
    BlockAllocator fresh(alloc.used());
    const auto got = run_target(*eng, prompt, chunk, others, fresh, seed++);
    EXPECT_TRUE(bit_identical(ref, got)) << label << " chunk " << chunk << " others " << others;
  }
}

// One sequence's chunk as a step of its own, wanting logits.
inline engine::StepBatch one_chunk(uint64_t id, int32_t start, std::vector<int32_t> tokens,
                                   std::vector<int32_t> table) {
  engine::SeqChunk c;
  c.request_id = id;
  c.start_pos = start;
  c.tokens = std::move(tokens);
  c.block_table = std::move(table);
  c.want_logits = true;
  engine::StepBatch b;
  b.seqs.push_back(c);
  return b;
}

// What forward() throws for the step, or "(no error)".
inline std::string forward_error(engine::Engine& eng, const engine::StepBatch& b) {
  try {
    engine::StepOutput out;
    eng.forward(b, out);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

// Checkpoints taken inside one step (at 16 and 32 of a 40-token chunk in blocks 0-2, slots 0 and 1)
// let other sequences start from them over the first sequence's blocks: their logits must be bit
// for bit the ones of the sequence computed whole. Needs 2 state slots and 6 free blocks of 16.
inline void expect_checkpoints_inside_a_step_restore(engine::Engine& eng,
                                                     const std::vector<int32_t>& p) {
  auto whole = one_chunk(1, 0, p, {0, 1, 2});
  whole.seqs[0].checkpoints = {{16, 0}, {32, 1}};
  engine::StepOutput ref;
  eng.forward(whole, ref);
  ASSERT_EQ(ref.logits.size(), 1u);
  struct Case {
    uint64_t seq;
    int32_t slot, from;
    std::vector<int32_t> table;
  };
  for (const Case& c : {Case{2, 1, 32, {0, 1, 3}}, Case{3, 0, 16, {0, 4, 5}}}) {
    SCOPED_TRACE(c.from);
    eng.restore_state(c.seq, c.slot, c.from);
    engine::StepOutput got;
    eng.forward(one_chunk(c.seq, c.from, {p.begin() + c.from, p.end()}, c.table), got);
    ASSERT_EQ(got.logits.size(), 1u);
    EXPECT_TRUE(bit_identical(ref.logits[0], got.logits[0]));
  }
}

}  // namespace baton::testing
