// Sliding-window layers keep their KV per sequence (model/window_kv.h): only the last `window`
// positions and the step being computed, recycled as a sequence moves on, with checkpoints of the
// window from which another sequence starts after a cached prefix, bit for bit.
#include "model/window_kv.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/llama_engine.h"
#include "invariance.h"
#include "support/shared_files.h"
#include "synth/synth_model.h"
#include "tiny_gpt_oss.h"

namespace baton {
namespace {

using model::KvType;
using model::WindowKv;
using testing::forward_error;
using testing::one_chunk;

// Window 8 over blocks of 4 positions: a sequence holds at most ceil(8 / 4) + 1 blocks between
// steps, and its step's blocks on top while it runs.
TEST(WindowKv, HoldsTheWindowAndTheStepOnly) {
  WindowKv w(KvType::F32, 4, 2, 1, 8, 8);
  w.begin(1, 0, 40);  // a 40-position prefill chunk: all its blocks
  w.commit(1, 40);
  EXPECT_EQ(w.blocks_in_use(), 10);
  for (int32_t p = 40; p < 400; ++p) {
    w.begin(1, p, p + 1);
    w.commit(1, p + 1);
    EXPECT_LE(w.blocks_in_use(), 3) << "position " << p;
  }
  // A second sequence reuses the blocks the first let go of.
  const int32_t allocated = w.blocks_allocated();
  w.begin(2, 0, 4);
  w.commit(2, 4);
  EXPECT_EQ(w.blocks_allocated(), allocated);
  w.release(1);
  w.release(2);
  EXPECT_EQ(w.blocks_in_use(), 0);
}

TEST(WindowKv, ContinuesOnlyWhereItsWindowIsHeld) {
  WindowKv w(KvType::F16, 4, 1, 1, 8, 8);
  EXPECT_NE(w.check(5, 3).find("holds no sliding-window KV"), std::string::npos);
  EXPECT_EQ(w.check(5, 0), "");
  w.begin(5, 0, 20);
  EXPECT_NE(w.check(5, 20).find("holds no usable positions"), std::string::npos) << "mid-step";
  w.commit(5, 20);
  EXPECT_EQ(w.check(5, 20), "");
  EXPECT_NE(w.check(5, 21).find("holds 20 positions"), std::string::npos);
  w.begin(5, 20, 40);
  w.commit(5, 40);
  EXPECT_EQ(w.check(5, 24), "") << "a step back into the last step's window";
  EXPECT_NE(w.check(5, 8).find("no longer holds positions 0..3"), std::string::npos)
      << w.check(5, 8);
}

// The checkpoint of a window is its bytes: restored into another sequence, the same rows come
// back, at any offset within the blocks.
TEST(WindowKv, CheckpointRestoresTheWindowBitForBit) {
  WindowKv w(KvType::F32, 4, 2, 2, 4, 6);
  EXPECT_EQ(w.checkpoint_bytes(), 6u * 2 * 2 * 2 * 4 * sizeof(float));
  std::vector<uint8_t> slots(2 * w.checkpoint_bytes());
  w.attach_slots(slots.data(), w.checkpoint_bytes(), 2);
  const int32_t* table = w.begin(1, 0, 11);
  for (int32_t p = 0; p < 11; ++p) {
    for (int32_t l = 0; l < 2; ++l) {
      std::vector<float> k(8), v(8);
      for (int32_t i = 0; i < 8; ++i) {
        k[i] = float(p * 100 + l * 10 + i);
        v[i] = -k[i];
      }
      w.cache().write(table[p / 4], p % 4, l, k.data(), v.data());
    }
  }
  w.commit(1, 11);
  w.begin_slot(0);
  w.capture(1, 11, 0);
  w.begin_slot(1);
  w.capture(1, 3, 1);  // shorter than the window: positions 0..2 only
  EXPECT_NE(w.restore(2, 0, 10).find("holds 11 positions, not 10"), std::string::npos);
  ASSERT_EQ(w.restore(2, 0, 11), "");
  EXPECT_EQ(w.check(2, 11), "");
  const int32_t* t2 = w.begin(2, 11, 12);
  for (int32_t p = 5; p < 11; ++p) {
    for (int32_t l = 0; l < 2; ++l) {
      const auto* a = w.cache().slot_data(table[p / 4], l, 1, 1, p % 4);
      const auto* b = w.cache().slot_data(t2[p / 4], l, 1, 1, p % 4);
      EXPECT_EQ(std::memcmp(a, b, w.cache().row_bytes(1)), 0) << "position " << p << " layer " << l;
    }
  }
  ASSERT_EQ(w.restore(3, 1, 3), "");
  EXPECT_EQ(w.check(3, 3), "");
}

// A gpt-oss file: layers 0 and 2 of 4 are windowed (window 8).
std::string gpt_oss_file(const std::filesystem::path& dir) {
  const auto spec = testing::tiny_gpt_oss_spec(4, 8, 5);
  const auto path = (dir / "gpt-oss-window.gguf").string();
  synth::write_synthetic_model(spec, path);
  return path;
}

TEST(WindowedModel, BlocksHoldTheFullAttentionLayersOnly) {
  auto eng = testing::load_engine(gpt_oss_file(testing::scratch_dir()), 2);
  const auto info = eng->info();
  // F16: 2 full layers x K and V x 2 KV heads x 32 dims x 16 positions x 2 bytes.
  EXPECT_EQ(info.kv_bytes_per_block, 2u * 2 * 2 * 32 * 16 * 2);
  // A checkpoint: the 8 window positions of the 2 windowed layers.
  EXPECT_EQ(info.state_bytes_per_seq, 8u * 2 * 2 * 2 * 32 * 2);
  EXPECT_NE(info.kv_layout.find("layers=2 "), std::string::npos) << info.kv_layout;
  EXPECT_NE(info.kv_layout.find("pattern=wawa window=8"), std::string::npos) << info.kv_layout;
  // A long decode holds one window's blocks, however long the context.
  eng->allocate_kv(64);
  const auto p = testing::some_prompt(300, info.n_vocab);
  std::vector<int32_t> table(19);
  for (int32_t b = 0; b < 19; ++b) table[b] = b;
  engine::StepOutput out;
  eng->forward(one_chunk(1, 0, {p.begin(), p.begin() + 40}, table), out);
  for (int32_t pos = 40; pos < 300; ++pos) {
    eng->forward(one_chunk(1, pos, {p[pos]}, table), out);
    ASSERT_LE(eng->model().window_kv()->blocks_in_use(), 2) << "position " << pos;
  }
  eng->release_sequence(1);
  EXPECT_EQ(eng->model().window_kv()->blocks_in_use(), 0);
}

// Checkpoints taken inside a step (at 16 and 32 of a 40-token chunk, past the window) let other
// sequences start from them over the first sequence's blocks: their logits are bit for bit the
// ones of the sequence computed whole. A sequence that has no window KV is refused, not
// computed over missing keys.
TEST(WindowedModel, CheckpointsInsideAStepRestoreTheSameLogits) {
  auto eng = testing::load_engine(gpt_oss_file(testing::scratch_dir()), 2);
  eng->allocate_kv(16);
  eng->allocate_state_slots(2);
  const auto p = testing::some_prompt(40, eng->info().n_vocab);
  testing::expect_checkpoints_inside_a_step_restore(*eng, p);
  const auto msg = forward_error(*eng, one_chunk(9, 16, {p.begin() + 16, p.end()}, {0, 6, 7}));
  EXPECT_NE(msg.find("sequence 9 continues at position 16 but holds no sliding-window KV"),
            std::string::npos)
      << msg;
}

// The reference files: the windowed layers' KV outside the block cache changes no bit of a
// logit (the reference tests compare with llama.cpp; this compares chunkings over the ring).
TEST(WindowedModel, ReferenceFileIsChunkingInvariant) {
  BATON_REQUIRE_SHARED(model, "models/arch/synth-gpt-oss-Q8_0.gguf");
  testing::expect_chunkings_invariant(model.string(), 2, 31);
}

}  // namespace
}  // namespace baton
