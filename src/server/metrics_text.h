#pragma once
// Prometheus text exposition (format 0.0.4) of the scheduler's metrics plus the server's own
// HTTP counters, each family with HELP and TYPE lines.
#include <cstdint>
#include <map>
#include <string>

#include "sched/metrics.h"

namespace baton::server {

struct ServerCounters {
  std::map<int, uint64_t> http_responses;  // by status code
  int64_t open_connections = 0;
  uint64_t rejected_connections = 0;  // over --max-connections
};

std::string render_metrics(const sched::Metrics& m, const ServerCounters& s);

}  // namespace baton::server
