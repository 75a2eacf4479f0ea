#include "sched/sched_config.h"

#include <fmt/format.h>

namespace baton::sched {

std::string SchedConfig::describe() const {
  std::string itl = itl_target_ms > 0 ? fmt::format("{}", itl_target_ms) : "off";
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
      "state_ram_mb={} state_checkpoint_blocks={}",
      parallel, prefill_chunk, mixed_prefill_chunk, itl, step, ram, blocks,
      prefix_cache ? "on" : "off", prefill_preempt ? "on" : "off", preempt_min_tokens,
      preempt_max_per_request, preempt_max_wait_s, park_ram_mb, disk, state_ram_mb,
      state_checkpoint_blocks > 0 ? fmt::format("{}", state_checkpoint_blocks) : "auto");
}

}  // namespace baton::sched
