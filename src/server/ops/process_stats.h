#pragma once
// The standard Prometheus process_* figures of this process, read from /proc/self (Linux). A
// figure that cannot be read stays empty and is left out of /metrics rather than exported as 0.
#include <cstdint>
#include <optional>

namespace baton::server {

struct ProcessStats {
  std::optional<uint64_t> resident_memory_bytes;
  std::optional<uint64_t> virtual_memory_bytes;
  std::optional<uint64_t> open_fds;
  std::optional<uint64_t> max_fds;
  std::optional<double> cpu_seconds;
  std::optional<double> start_time_seconds;  // since the Unix epoch
};

ProcessStats read_process_stats();

}  // namespace baton::server
