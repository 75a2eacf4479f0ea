#include "server/ops/process_stats.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace baton::server {

namespace {

// /proc/self/stat fields after the command name, which is parenthesised and may hold spaces:
// the last ')' ends it, and the next token is field 3 (state).
std::vector<std::string> stat_fields_from_state() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return {};
  size_t close = line.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(line.substr(close + 1));
  return {std::istream_iterator<std::string>(rest), std::istream_iterator<std::string>()};
}

// Field number N of proc(5)'s numbering, from the tokens stat_fields_from_state returns.
std::optional<uint64_t> stat_field(const std::vector<std::string>& f, size_t n) {
  if (n < 3 || n - 3 >= f.size()) return std::nullopt;
  try {
    return std::stoull(f[n - 3]);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Boot time, which start times in /proc/self/stat are relative to.
std::optional<uint64_t> boot_time_seconds() {
  std::ifstream in("/proc/stat");
  std::string key;
  uint64_t value = 0;
  while (in >> key) {
    if (key == "btime" && in >> value) return value;
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return std::nullopt;
}

std::optional<uint64_t> count_open_fds() {
  std::error_code ec;
  uint64_t n = 0;
  for (std::filesystem::directory_iterator it("/proc/self/fd", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++n;
  }
  if (ec) return std::nullopt;
  return n;
}

std::optional<uint64_t> fd_limit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return std::nullopt;
  return static_cast<uint64_t>(lim.rlim_cur);
}

}  // namespace

ProcessStats read_process_stats() {
  ProcessStats p;
  p.open_fds = count_open_fds();
  p.max_fds = fd_limit();
  const auto f = stat_fields_from_state();
  const long ticks = sysconf(_SC_CLK_TCK);
  const long page = sysconf(_SC_PAGESIZE);
  auto utime = stat_field(f, 14), stime = stat_field(f, 15), start = stat_field(f, 22);
  auto vsize = stat_field(f, 23), rss = stat_field(f, 24);
  if (ticks > 0 && utime && stime) p.cpu_seconds = static_cast<double>(*utime + *stime) / ticks;
  auto btime = boot_time_seconds();
  if (ticks > 0 && start && btime) {
    p.start_time_seconds = static_cast<double>(*btime) + static_cast<double>(*start) / ticks;
  }
  p.virtual_memory_bytes = vsize;
  if (page > 0 && rss) p.resident_memory_bytes = *rss * static_cast<uint64_t>(page);
  return p;
}

}  // namespace baton::server
