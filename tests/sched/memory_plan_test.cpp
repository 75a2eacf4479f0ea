// The memory plan made at start (sched/memory_plan.h): the pool sized to what fits, defaults
// lowered, explicit settings that cannot fit refused with their numbers and the flag to change.
#include "sched/memory_plan.h"

#include <gtest/gtest.h>

#include <string>

namespace baton::sched {
namespace {

constexpr uint64_t kMiB = 1ull << 20, kGiB = 1ull << 30;

// The shape of Qwen3-30B-A3B at q4_0: 16 GB of weights, 48 layers x 4 KV heads x 128 dims.
model::ModelFootprint full_size_moe(uint64_t kv_token_bytes = 48 * 4 * 128 * 2 * 2) {
  model::ModelFootprint f;
  f.file_bytes = 17 * kGiB;
  f.weights_bytes = 16 * kGiB;
  f.tiled_bytes = 16 * kGiB;
  f.block_size = 16;
  f.kv_bytes_per_block = kv_token_bytes * 16;
  f.activation_bytes_per_row = 180 * 1024;
  f.logits_bytes_per_row = 151936 * 4;
  f.n_ctx_train = 40960;
  return f;
}

util::HostMemory ram(uint64_t available, uint64_t total = 24 * kGiB) {
  util::HostMemory h;
  h.resident_room = available;
  h.mem_total = total;
  return h;
}

SchedConfig server(int32_t ctx, int32_t parallel = 4) {
  SchedConfig c;
  c.ctx = ctx;
  c.parallel = parallel;
  return c;
}

std::string refusal(const model::ModelFootprint& f, const SchedConfig& c, bool ctx_given,
                    const util::HostMemory& h) {
  try {
    plan_memory(f, c, ctx_given, h);
  } catch (const MemoryPlanError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(MemoryPlan, EverythingFitsTakesCtxTimesParallelPlusAQuarter) {
  auto f = full_size_moe();
  f.weights_bytes = f.tiled_bytes = kGiB;
  const MemoryPlan p = plan_memory(f, server(4096), false, ram(23 * kGiB));
  EXPECT_EQ(p.kv_blocks, 256 * 4 + 256 + 1);
  EXPECT_EQ(p.ctx, 4096);
  EXPECT_TRUE(p.warning.empty()) << p.warning;
  EXPECT_NE(p.summary.find("the pool holds 20496 tokens"), std::string::npos) << p.summary;
  EXPECT_NE(p.summary.find("MemAvailable"), std::string::npos) << p.summary;
}

// The reported OOM kill: 16 GB of weights, --ctx 32768 x 4 in f16 is 12 GB of KV. The pool
// takes what is left (less the margin) and still holds more than one full context.
TEST(MemoryPlan, FullSizeModelAt32KGetsThePoolThatFits) {
  const auto f = full_size_moe();
  const MemoryPlan p = plan_memory(f, server(32768), true, ram(23 * kGiB));
  const uint64_t planned = p.weights + p.activations + p.sequence_state + p.checkpoints +
                           p.disk_buffers + p.overhead + p.kv + p.margin;
  EXPECT_LE(planned, 23 * kGiB);
  EXPECT_GT(planned, 23 * kGiB - f.kv_bytes_per_block);  // nothing left unused but a block
  EXPECT_GE(p.kv_blocks, 32768 / 16);
  EXPECT_LT(p.kv_blocks, 4 * 32768 / 16);
  EXPECT_EQ(p.ctx, 32768);
  // q8_0 keys and values: about twice the tokens in the same room.
  const MemoryPlan q =
      plan_memory(full_size_moe(48 * 4 * 136 * 2), server(32768), true, ram(23 * kGiB));
  EXPECT_GT(q.kv_blocks, p.kv_blocks * 17 / 10);
}

TEST(MemoryPlan, AnExplicitContextThatCannotFitOnceIsRefused) {
  const auto f = full_size_moe();
  const std::string why = refusal(f, server(131072), true, ram(19 * kGiB));
  EXPECT_NE(why.find("--ctx 131072 needs 12.0 GB of KV"), std::string::npos) << why;
  EXPECT_NE(why.find("lower --ctx to"), std::string::npos) << why;
  EXPECT_NE(why.find("-ctk q8_0 -ctv q8_0"), std::string::npos) << why;
  EXPECT_NE(why.find("MemAvailable"), std::string::npos) << why;
}

TEST(MemoryPlan, ADefaultContextThatCannotFitIsLoweredAndSaid) {
  const auto f = full_size_moe();
  const MemoryPlan p = plan_memory(f, server(40960, 1), false, ram(19 * kGiB));
  EXPECT_LT(p.ctx, 40960);
  EXPECT_EQ(p.ctx % 16, 0);
  EXPECT_EQ(p.kv_blocks * 16, p.ctx);
  EXPECT_NE(p.warning.find("does not fit"), std::string::npos) << p.warning;
}

TEST(MemoryPlan, ExplicitKvRamThatCannotFitIsRefusedWithWhatFits) {
  const auto f = full_size_moe();
  auto c = server(32768);
  c.kv_ram_mb = 12288;
  const std::string why = refusal(f, c, true, ram(23 * kGiB));
  EXPECT_NE(why.find("--kv-ram-mb 12288 does not fit"), std::string::npos) << why;
  EXPECT_NE(why.find("weights 16.0 GB"), std::string::npos) << why;
  EXPECT_NE(why.find("give --kv-ram-mb"), std::string::npos) << why;
  c.kv_ram_mb = 2048;
  const MemoryPlan p = plan_memory(f, c, true, ram(23 * kGiB));
  EXPECT_LE(p.kv, 2048 * kMiB);  // whole blocks of it
  EXPECT_GT(p.kv, 2048 * kMiB - f.kv_bytes_per_block);
  EXPECT_NE(p.warning.find("fewer than --ctx 32768"), std::string::npos) << p.warning;
}

TEST(MemoryPlan, WeightsThatCannotFitAreRefusedBeforeTheLoad) {
  const auto f = full_size_moe();
  const std::string why = refusal(f, server(4096), false, ram(12 * kGiB));
  EXPECT_NE(why.find("the model needs"), std::string::npos) << why;
  EXPECT_NE(why.find("weights 16.0 GB"), std::string::npos) << why;
  EXPECT_NE(why.find("smaller quantization"), std::string::npos) << why;
}

TEST(MemoryPlan, TheTighterLimitBindsAndIsNamed) {
  auto f = full_size_moe();
  f.weights_bytes = f.tiled_bytes = 2 * kGiB;
  auto h = ram(20 * kGiB);
  h.resident_room = 6 * kGiB;
  h.resident_source = "cgroup memory.max";
  MemoryPlan p = plan_memory(f, server(8192), false, h);
  EXPECT_EQ(p.source, "cgroup memory.max");
  EXPECT_LE(p.kv, 4 * kGiB);
  // An address-space limit counts the tiles beside the mapping, and thread stacks and arenas.
  h.address_room = 4 * kGiB;
  p = plan_memory(f, server(8192), false, h);
  EXPECT_EQ(p.source, "ulimit -v");
  EXPECT_LE(p.kv + p.activations + f.tiled_bytes + kAddressSlackBytes + p.overhead, 4 * kGiB);
  h.address_room = 2 * kGiB;
  const std::string why = refusal(f, server(8192), false, h);
  EXPECT_NE(why.find("ulimit -v leaves 2.0 GB"), std::string::npos) << why;
}

TEST(MemoryPlan, SequenceStateCheckpointsAndTheDiskTierAreCounted) {
  auto f = full_size_moe();
  f.weights_bytes = f.tiled_bytes = kGiB;
  f.state_bytes_per_seq = 60 * kMiB;
  f.checkpoint_bytes = 64 * kMiB;
  f.window = 128;
  f.window_bytes_per_position = 24 * 1024;
  auto c = server(4096, 2);
  c.state_ram_mb = 1024;
  c.kv_disk_dir = "kv";
  c.kv_disk_space_mb = 1000;
  const MemoryPlan p = plan_memory(f, c, false, ram(23 * kGiB));
  EXPECT_EQ(p.checkpoints, kGiB);
  EXPECT_EQ(p.sequence_state, 2 * (60 * kMiB + (128 + 2048 + 32) * 24 * 1024));
  EXPECT_EQ(p.disk_buffers, 2 * 32 * f.kv_bytes_per_block);
  EXPECT_NE(p.summary.find("state checkpoints 1.0 GB (--state-ram-mb)"), std::string::npos)
      << p.summary;
  c.state_ram_mb = 30000;
  EXPECT_NE(refusal(f, c, false, ram(23 * kGiB)).find("--state-ram-mb"), std::string::npos);
}

}  // namespace
}  // namespace baton::sched
