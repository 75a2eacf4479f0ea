#pragma once
// What memory this process may still take: the kernel's MemAvailable, the room its cgroup's
// limit leaves (v2 memory.max, v1 memory.limit_in_bytes), and the room an address-space limit
// (ulimit -v) leaves. The parsers are separate so tests can feed them text.
#include <cstdint>
#include <optional>
#include <string>

namespace baton::util {

inline constexpr uint64_t kUnlimited = ~uint64_t{0};

struct HostMemory {
  // Resident memory this process may still take, and what bounds it ("MemAvailable",
  // "cgroup memory.max" or "cgroup memory.limit_in_bytes").
  uint64_t resident_room = kUnlimited;
  std::string resident_source = "MemAvailable";
  // Address space it may still map (ulimit -v less what is mapped now), kUnlimited without one.
  uint64_t address_room = kUnlimited;
  uint64_t mem_total = 0;
};

HostMemory read_host_memory();

// "MemAvailable:  1234 kB" (or a named field) from /proc/meminfo text, in bytes.
std::optional<uint64_t> meminfo_field(const std::string& meminfo, const std::string& field);
// The memory controller's path for this process from /proc/self/cgroup text: v2's "0::/path",
// else v1's "N:memory:/path" (with v1 set when it came from a v1 line).
std::optional<std::string> cgroup_memory_path(const std::string& proc_cgroup, bool& v1);
// A cgroup limit file's value ("max" or v1's near-2^63 sentinel are no limit).
std::optional<uint64_t> cgroup_limit_value(const std::string& text);
// Bytes of a field of a cgroup's memory.stat ("anon" on v2, "total_rss" on v1).
std::optional<uint64_t> memory_stat_field(const std::string& stat, const std::string& field);

}  // namespace baton::util
