#pragma once
// The memory plan made at start, before the weights are rewritten into tiles: weights,
// activations, sequence state, state checkpoints, the disk tier's buffers and the KV pool added
// up against what the host leaves this process (util/host_memory.h). A pure function, so every
// case is tested without a machine of that size.
//
// An automatic pool (--kv-ram-mb 0) is sized to what fits, at most ctx x parallel plus a quarter
// for cached prefixes; one that cannot hold a single --ctx request lowers a default context or
// refuses an explicit one. Explicit settings that cannot fit are refused with the numbers and
// the flag to change, never left to the kernel's OOM killer.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "model/footprint.h"
#include "sched/sched_config.h"
#include "util/host_memory.h"

namespace baton::sched {

class MemoryPlanError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct MemoryPlan {
  int32_t kv_blocks = 0;
  int32_t ctx = 0;  // --ctx, or the default lowered to what the pool holds
  // What the plan counted, in bytes.
  uint64_t weights = 0, activations = 0, sequence_state = 0, checkpoints = 0, disk_buffers = 0,
           overhead = 0, margin = 0, kv = 0;
  uint64_t room = 0;    // what the binding limit leaves
  std::string source;   // that limit ("MemAvailable", "cgroup memory.max", "ulimit -v")
  std::string summary;  // one log line: the figures and the tokens the pool holds
  std::string warning;  // a default changed or a request size refused (empty: none)
};

// Process memory outside the model that does not grow with it: code, tokenizer, HTTP and live
// view buffers, allocator slack.
inline constexpr uint64_t kProcessOverheadBytes = 192ull << 20;
// Left to the system (page cache, other processes): this much or 4 % of RAM, the larger.
inline constexpr uint64_t kMinMarginBytes = 256ull << 20;
// Address space beyond resident needs: thread stacks and malloc arenas (capped under a limit).
inline constexpr uint64_t kAddressSlackBytes = 768ull << 20;

// Throws MemoryPlanError (one line) when the settings cannot fit.
MemoryPlan plan_memory(const model::ModelFootprint& fp, const SchedConfig& config, bool ctx_given,
                       const util::HostMemory& host);

}  // namespace baton::sched
