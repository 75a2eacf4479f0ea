#include "sched/metrics.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace baton::sched {

namespace {

Histogram with_bounds(std::vector<double> bounds) {
  Histogram h;
  h.bounds = std::move(bounds);
  h.counts.assign(h.bounds.size() + 1, 0);
  return h;
}

}  // namespace

Histogram Histogram::inter_token_seconds() {
  return with_bounds({0.005, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.06, 0.075, 0.1, 0.125, 0.15,
                      0.175, 0.2,  0.25,  0.3,  0.4,  0.5,  0.75, 1,    2.5,   5,   10,    30});
}

Histogram Histogram::request_seconds() {
  return with_bounds({0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1,   2.5, 5,    10,  15,
                      20,    30,    45,   60,    90,   120, 180,  300, 600, 900, 1800, 3600});
}

Histogram Histogram::step_seconds() {
  return with_bounds({0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1,
                      0.15,   0.2,   0.3,   0.5,   0.75, 1,    2,    5,    10,    30});
}

Histogram Histogram::fractions() {
  return with_bounds({0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1});
}

Histogram Histogram::counts_to(int n) {
  std::vector<double> bounds;
  for (int i = 1; i <= n; ++i) bounds.push_back(i);
  return with_bounds(std::move(bounds));
}

int32_t retry_after_queue_full_s(const Metrics& m, int32_t parallel) {
  if (m.e2e_latency.count == 0) return 1;
  const double queued = m.queue_time.count > 0 ? m.queue_time.sum / m.queue_time.count : 0;
  const double running = std::max(0.0, m.e2e_latency.sum / m.e2e_latency.count - queued);
  // With `parallel` requests running, one finishes about every running / parallel seconds.
  const double s = std::ceil(running / std::max(1, parallel));
  return static_cast<int32_t>(std::clamp(s, 1.0, 60.0));
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
