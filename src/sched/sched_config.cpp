#include "sched/sched_config.h"

#include <fmt/format.h>

#include <algorithm>

namespace baton::sched {

std::string SchedConfig::describe() const {
  const bool auto_itl = itl_target_decode_steps > 0;
  std::string itl =
      !auto_itl ? (itl_target_ms > 0 ? fmt::format("{:g}", itl_target_ms) : "off")
      : itl_target_ms > 0
          ? fmt::format("{:.0f}({:g}x_decode_step)", itl_target_ms, itl_target_decode_steps)
          : fmt::format("auto({:g}x_decode_step)", itl_target_decode_steps);
  std::string step = max_step_ms > 0 ? fmt::format("{}", max_step_ms) : "off";
  std::string ram = kv_ram_mb > 0 ? fmt::format("{}", kv_ram_mb) : "auto";
  std::string blocks = kv_blocks > 0 ? fmt::format("{}", kv_blocks) : "auto";
  std::string disk = kv_disk_space_mb > 0 && !kv_disk_dir.empty()
                         ? fmt::format("{} ({} MB)", kv_disk_dir, kv_disk_space_mb)
                         : "off";
  return fmt::format(
      "batched mode: parallel={} prefill_chunk={} mixed_prefill_chunk={} itl_target_ms={} "
      "max_step_ms={} "
      "kv_ram_mb={} kv_blocks={} prefix_cache={} prefill_preempt={} preempt_min_tokens={} "
      "preempt_max_per_request={} preempt_max_wait_s={} park_ram_mb={} kv_disk={} "
      "state_ram_mb={} state_checkpoint_blocks={} speculate={}",
      parallel, prefill_chunk, mixed_prefill_chunk, itl, step, ram, blocks,
      prefix_cache ? "on" : "off", prefill_preempt ? "on" : "off", preempt_min_tokens,
      preempt_max_per_request, preempt_max_wait_s, park_ram_mb, disk, state_ram_mb,
      state_checkpoint_blocks > 0 ? fmt::format("{}", state_checkpoint_blocks) : "auto",
      speculate == SpeculateMode::Off ? std::string("off")
      : speculate == SpeculateMode::Ngram
          ? fmt::format("ngram(draft_max={})", draft_max)
          : fmt::format("suffix(draft_max={} corpus_tokens={})", draft_max, spec_corpus_tokens));
}

int32_t auto_kv_blocks(const SchedConfig& c, int32_t block_size) {
  const int64_t bs = std::max(1, block_size);
  const int64_t per_slot = (std::max(1, c.ctx) + bs - 1) / bs;
  const int64_t n = per_slot * std::max(1, c.parallel);
  return static_cast<int32_t>(std::min<int64_t>(n + n / 4 + 1, 1 << 30));
}

}  // namespace baton::sched
