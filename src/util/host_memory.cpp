#include "util/host_memory.h"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace baton::util {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<uint64_t> number_after(const std::string& text, size_t at) {
  while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) ++at;
  if (at >= text.size() || text[at] < '0' || text[at] > '9') return std::nullopt;
  uint64_t v = 0;
  for (; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at) {
    if (v > (kUnlimited - 9) / 10) return kUnlimited;
    v = v * 10 + static_cast<uint64_t>(text[at] - '0');
  }
  return v;
}

// Offset just past "field" + sep at the start of a line, or npos.
size_t line_field(const std::string& text, const std::string& field, char sep) {
  const std::string key = field + sep;
  for (size_t at = 0; at < text.size();) {
    if (text.compare(at, key.size(), key) == 0) return at + key.size();
    const size_t nl = text.find('\n', at);
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  return std::string::npos;
}

// The room a cgroup leaves: its limit less the anonymous memory its members hold (page cache
// in it can be reclaimed), or nothing without a limit.
std::optional<uint64_t> cgroup_room(bool& v1, std::string& source) {
  const auto path = cgroup_memory_path(slurp("/proc/self/cgroup"), v1);
  if (!path) return std::nullopt;
  const std::string dir =
      (v1 ? std::string("/sys/fs/cgroup/memory") : std::string("/sys/fs/cgroup")) + *path;
  const auto limit =
      cgroup_limit_value(slurp(dir + (v1 ? "/memory.limit_in_bytes" : "/memory.max")));
  if (!limit) return std::nullopt;
  const uint64_t used =
      memory_stat_field(slurp(dir + "/memory.stat"), v1 ? "total_rss" : "anon").value_or(0);
  source = v1 ? "cgroup memory.limit_in_bytes" : "cgroup memory.max";
  return *limit > used ? *limit - used : 0;
}

}  // namespace

std::optional<uint64_t> meminfo_field(const std::string& meminfo, const std::string& field) {
  const size_t at = line_field(meminfo, field, ':');
  if (at == std::string::npos) return std::nullopt;
  const auto kb = number_after(meminfo, at);
  if (!kb) return std::nullopt;
  return *kb >= kUnlimited / 1024 ? kUnlimited : *kb * 1024;
}

std::optional<std::string> cgroup_memory_path(const std::string& proc_cgroup, bool& v1) {
  std::optional<std::string> v2_path;
  std::istringstream lines(proc_cgroup);
  for (std::string line; std::getline(lines, line);) {
    const size_t a = line.find(':');
    const size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    if (controllers.empty() && line.compare(0, a, "0") == 0) v2_path = path;
    std::istringstream names(controllers);
    for (std::string c; std::getline(names, c, ',');) {
      if (c == "memory") {
        v1 = true;
        return path;
      }
    }
  }
  v1 = false;
  return v2_path;
}

std::optional<uint64_t> cgroup_limit_value(const std::string& text) {
  const auto v = number_after(text, 0);
  // v1 writes "no limit" as the largest page-aligned signed 64-bit value.
  if (!v || *v >= (uint64_t{1} << 62)) return std::nullopt;
  return v;
}

std::optional<uint64_t> memory_stat_field(const std::string& stat, const std::string& field) {
  const size_t at = line_field(stat, field, ' ');
  if (at == std::string::npos) return std::nullopt;
  return number_after(stat, at);
}

HostMemory read_host_memory() {
  HostMemory m;
  const std::string meminfo = slurp("/proc/meminfo");
  m.mem_total = meminfo_field(meminfo, "MemTotal").value_or(0);
  if (const auto avail = meminfo_field(meminfo, "MemAvailable")) m.resident_room = *avail;
  bool v1 = false;
  std::string source;
  if (const auto room = cgroup_room(v1, source); room && *room < m.resident_room) {
    m.resident_room = *room;
    m.resident_source = source;
  }
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    const std::string status = slurp("/proc/self/status");
    const uint64_t mapped = meminfo_field(status, "VmSize").value_or(0);
    m.address_room = as.rlim_cur > mapped ? as.rlim_cur - mapped : 0;
  }
  return m;
}

}  // namespace baton::util
