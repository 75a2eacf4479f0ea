#include "sched/memory_plan.h"

#include <fmt/format.h>

#include <algorithm>

namespace baton::sched {
namespace {

constexpr uint64_t kMiB = 1ull << 20;

std::string gb(uint64_t bytes) {
  return bytes >= (1ull << 30) ? fmt::format("{:.1f} GB", double(bytes) / double(1ull << 30))
                               : fmt::format("{} MB", (bytes + kMiB - 1) / kMiB);
}

// KB of KV per token as the messages state it (at least 1).
uint64_t kb_per_token(uint64_t bytes) {
  return std::max<uint64_t>(1, (bytes + 1023) / 1024);
}

// Everything but the KV pool, in resident bytes (the plan's fields but kv, room and margin).
void count_fixed(const model::ModelFootprint& fp, const SchedConfig& c, MemoryPlan& p) {
  const int64_t parallel = std::max(1, c.parallel);
  const int64_t chunk = std::max({1, c.prefill_chunk, c.mixed_prefill_chunk});
  const int64_t rows_per_seq = 1 + (c.speculate != SpeculateMode::Off ? c.draft_max : 0);
  const int64_t rows = chunk + parallel * rows_per_seq;
  p.weights = fp.weights_bytes;
  p.activations =
      rows * fp.activation_bytes_per_row + parallel * rows_per_seq * fp.logits_bytes_per_row;
  const uint64_t ring = fp.window > 0
                            ? static_cast<uint64_t>(fp.window + chunk + 2 * fp.block_size) *
                                  fp.window_bytes_per_position
                            : 0;
  p.sequence_state = parallel * (fp.state_bytes_per_seq + ring);
  p.checkpoints = fp.checkpoint_bytes > 0 ? static_cast<uint64_t>(c.state_ram_mb) * kMiB : 0;
  // A segment being written (buffered, then fsynced) and one being read through the bounce
  // buffer: 32 blocks each, at least 16 MB.
  p.disk_buffers =
      c.kv_disk_dir.empty() ? 0 : 2 * std::max<uint64_t>(32 * fp.kv_bytes_per_block, 16 * kMiB);
  p.overhead = kProcessOverheadBytes;
}

uint64_t fixed_total(const MemoryPlan& p) {
  return p.weights + p.activations + p.sequence_state + p.checkpoints + p.disk_buffers + p.overhead;
}

std::string breakdown(const MemoryPlan& p) {
  std::string s = fmt::format("weights {} + activations {}", gb(p.weights), gb(p.activations));
  if (p.sequence_state > 0) s += fmt::format(" + sequence state {}", gb(p.sequence_state));
  if (p.checkpoints > 0)
    s += fmt::format(" + state checkpoints {} (--state-ram-mb)", gb(p.checkpoints));
  if (p.disk_buffers > 0) s += fmt::format(" + disk tier buffers {}", gb(p.disk_buffers));
  return s + fmt::format(" + process {}", gb(p.overhead));
}

// The room left for the pool under each limit, taking the tighter; sets room, source, margin.
uint64_t kv_room(const model::ModelFootprint& fp, const util::HostMemory& host, MemoryPlan& p) {
  const uint64_t fixed = fixed_total(p);
  p.margin = std::max(kMinMarginBytes, host.mem_total / 25);
  p.room = host.resident_room;
  p.source = host.resident_source;
  const uint64_t usable = p.room > p.margin ? p.room - p.margin : 0;
  if (fixed >= usable) {
    throw MemoryPlanError(fmt::format(
        "the model needs {} before any KV ({}) and {} is left to the system, but {} leaves {}: "
        "use a smaller quantization of the model, lower --prefill-chunk or --parallel, or free "
        "memory",
        gb(fixed), breakdown(p), gb(p.margin), p.source, gb(p.room)));
  }
  uint64_t kv = usable - fixed;
  if (host.address_room == util::kUnlimited) return kv;
  // The file's mapping is mapped already; the tiles, the rest and the slack are still to come.
  const uint64_t virt = fixed - p.weights + fp.tiled_bytes + kAddressSlackBytes;
  if (virt >= host.address_room) {
    throw MemoryPlanError(fmt::format(
        "the model needs {} of address space before any KV ({}, tiles {}, thread stacks and "
        "arenas {}) but ulimit -v leaves {}: raise ulimit -v, or use a smaller model file",
        gb(virt), breakdown(p), gb(fp.tiled_bytes), gb(kAddressSlackBytes), gb(host.address_room)));
  }
  if (host.address_room - virt < kv) {
    kv = host.address_room - virt;
    p.room = host.address_room;
    p.source = "ulimit -v";
    p.margin = kAddressSlackBytes;
  }
  return kv;
}

constexpr const char* kQuantizeHint =
    "or quantize the cache (-ctk q8_0 -ctv q8_0 about halves an f16 cache, q4_0 quarters it)";

}  // namespace

MemoryPlan plan_memory(const model::ModelFootprint& fp, const SchedConfig& config, bool ctx_given,
                       const util::HostMemory& host) {
  MemoryPlan p;
  p.ctx = std::max(1, config.ctx);
  const int32_t bs = std::max(1, fp.block_size);
  const uint64_t per_block = std::max<uint64_t>(1, fp.kv_bytes_per_block);
  const uint64_t per_token = std::max<uint64_t>(1, per_block / bs);
  count_fixed(fp, config, p);
  const uint64_t room = kv_room(fp, host, p);
  const int64_t fit_blocks = static_cast<int64_t>(std::min<uint64_t>(room / per_block, 1u << 30));
  const int64_t ctx_blocks = (p.ctx + bs - 1) / bs;
  if (config.kv_ram_mb > 0) {
    const int64_t asked =
        std::max<int64_t>(1, (static_cast<uint64_t>(config.kv_ram_mb) * kMiB) / per_block);
    if (asked > fit_blocks) {
      throw MemoryPlanError(fmt::format(
          "--kv-ram-mb {} does not fit: {} + KV {} > the {} that {} leaves less {} for the "
          "system: give --kv-ram-mb {} or less, {}",
          config.kv_ram_mb, breakdown(p), gb(asked * per_block), gb(p.room), p.source, gb(p.margin),
          fit_blocks * per_block / kMiB, kQuantizeHint));
    }
    p.kv_blocks = static_cast<int32_t>(asked);
    if (asked < ctx_blocks) {
      p.warning = fmt::format(
          "--kv-ram-mb {} holds {} tokens, fewer than --ctx {}: a request over {} tokens is "
          "refused",
          config.kv_ram_mb, asked * bs, p.ctx, asked * bs);
    }
  } else {
    p.kv_blocks = static_cast<int32_t>(std::min<int64_t>(auto_kv_blocks(config, bs), fit_blocks));
    if (p.kv_blocks < ctx_blocks) {
      const int64_t fit_tokens = static_cast<int64_t>(p.kv_blocks) * bs;
      if (ctx_given || fit_tokens < 4 * bs) {
        throw MemoryPlanError(fmt::format(
            "--ctx {} needs {} of KV for one request ({} KB per token) but {} leaves room for {} "
            "({} tokens) beside {}: lower --ctx to {} or less, {}",
            p.ctx, gb(ctx_blocks * per_block), kb_per_token(per_token), p.source,
            gb(fit_blocks * per_block), fit_tokens, breakdown(p), fit_tokens, kQuantizeHint));
      }
      p.warning = fmt::format(
          "the default context {} does not fit: {} leaves KV room for {} tokens, so --ctx is "
          "{} (quantize the cache with -ctk q8_0 -ctv q8_0 for about twice that)",
          p.ctx, p.source, fit_tokens, fit_tokens);
      p.ctx = static_cast<int32_t>(fit_tokens);
    }
  }
  p.kv = static_cast<uint64_t>(p.kv_blocks) * per_block;
  const int64_t tokens = static_cast<int64_t>(p.kv_blocks) * bs;
  p.summary = fmt::format(
      "memory plan: {} leaves {}; {} + KV pool {} ({} KB per token) + {} left to the system; the "
      "pool holds {} tokens: {:.1f} x --ctx {}, shared by --parallel {}",
      p.source, gb(p.room), breakdown(p), gb(p.kv), kb_per_token(per_token), gb(p.margin), tokens,
      double(tokens) / double(p.ctx), p.ctx, std::max(1, config.parallel));
  return p;
}

}  // namespace baton::sched
