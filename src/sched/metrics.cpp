#include "sched/metrics.h"

#include <algorithm>

namespace baton::sched {

Histogram Histogram::latency_seconds() {
  Histogram h;
  h.bounds = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
              1,     2.5,    5,     10,   20,    30,   60,  120};
  h.counts.assign(h.bounds.size() + 1, 0);
  return h;
}

void Histogram::observe(double value) {
  if (counts.size() != bounds.size() + 1) counts.assign(bounds.size() + 1, 0);
  // Bounds are inclusive upper limits (Prometheus "le").
  auto it = std::lower_bound(bounds.begin(), bounds.end(), value);
  ++counts[static_cast<size_t>(it - bounds.begin())];
  sum += value;
  ++count;
}

}  // namespace baton::sched
