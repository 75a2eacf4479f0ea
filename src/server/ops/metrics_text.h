#pragma once
// Prometheus text exposition (format 0.0.4) of the scheduler's metrics, the server's own HTTP
// counters and the standard process_* figures, each family with HELP and TYPE lines. Names
// follow Prometheus conventions (base units, counters end in _total) so `promtool check metrics`
// passes; tests/server/metrics_text_test.cpp holds it to that.
#include <cstdint>
#include <map>
#include <string>

#include "sched/metrics.h"
#include "server/ops/process_stats.h"

namespace baton::server {

struct ServerCounters {
  std::map<int, uint64_t> http_responses;  // by status code
  int64_t open_connections = 0;
  uint64_t rejected_connections = 0;   // over --max-connections
  uint64_t evicted_connections = 0;    // closed to make room under --max-connections
  uint64_t timed_out_connections = 0;  // past a header, body or idle deadline
};

// Reads this process's figures from /proc itself.
std::string render_metrics(const sched::Metrics& m, const ServerCounters& s);
// The same with the process figures given, so tests can pin them.
std::string render_metrics(const sched::Metrics& m, const ServerCounters& s, const ProcessStats& p);

}  // namespace baton::server
