// live-view: what open dashboards cost the engine loop. The same workload (streams decoding
// while a long prompt prefills beside them) runs in rounds, alternately with no live viewer
// and with N reading GET /events as an open /dashboard does; each phase's mean step time comes
// from the server's baton_step_duration_seconds (sum / count over the phase). The report sets
// the difference between the two medians beside the spread between rounds of the same kind
// (the measurement noise of this machine in this run).
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <thread>

#include "bench/scenario_runner.h"
#include "bench/stats.h"

namespace baton::bench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct StepTotals {
  double sum = kNaN, count = kNaN;
};

StepTotals step_totals(const Endpoint& ep) {
  StepTotals t;
  if (auto body = fetch_metrics(ep, 10)) {
    t.sum = find_sample(*body, "baton_step_duration_seconds_sum").value_or(kNaN);
    t.count = find_sample(*body, "baton_step_duration_seconds_count").value_or(kNaN);
  }
  return t;
}

// The median of the rounds that measured something.
double median_measured(std::vector<double> v) {
  std::erase_if(v, [](double x) { return std::isnan(x); });
  return v.empty() ? kNaN : median(v);
}

double spread(const std::vector<double>& v) {
  double lo = kNaN, hi = kNaN;
  for (double x : v) {
    if (std::isnan(x)) continue;
    lo = std::isnan(lo) ? x : std::min(lo, x);
    hi = std::isnan(hi) ? x : std::max(hi, x);
  }
  return hi - lo;
}

struct PhaseFigures {
  double step_ms = kNaN;  // mean step time over the phase
  double stream_gap_p50 = kNaN;
  uint64_t viewer_bytes = 0;
  bool viewers_ok = true;
};

PhaseFigures run_phase(RunContext& ctx, ScenarioResult& out, long viewers, long round) {
  const long streams = ctx.knob("streams"), decode = ctx.knob("decode-tokens");
  const long prompt = ctx.knob("prompt-tokens"), long_tokens = ctx.knob("long-tokens");
  PhaseFigures f;
  std::atomic<bool> stop{false};
  std::vector<std::thread> readers;
  std::vector<std::optional<uint64_t>> read(static_cast<size_t>(viewers));
  for (long v = 0; v < viewers; ++v) {
    readers.emplace_back(
        [&, v] { read[static_cast<size_t>(v)] = read_live_events(ctx.endpoint(), stop); });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the viewers are connected
  const StepTotals before = step_totals(ctx.endpoint());
  std::vector<std::unique_ptr<InFlight>> flights;
  const auto salt = static_cast<std::uint64_t>(round * 1000 + viewers);
  for (long i = 0; i < streams; ++i) {
    flights.push_back(std::make_unique<InFlight>(
        ctx, ctx.completion(fmt::format("stream {} ({} viewers)", i + 1, viewers), prompt, decode,
                            salt * 31 + static_cast<std::uint64_t>(i))));
  }
  flights.front()->wait_tokens(std::min<long>(20, decode), ctx.deadline());
  flights.push_back(std::make_unique<InFlight>(
      ctx,
      ctx.completion(fmt::format("long ({} viewers)", viewers), long_tokens, 16, salt * 31 + 29)));
  auto records = join_all(flights);
  const StepTotals after = step_totals(ctx.endpoint());
  stop = true;
  for (auto& t : readers) t.join();
  for (const auto& r : read) {
    f.viewers_ok = f.viewers_ok && r.has_value();
    f.viewer_bytes += r.value_or(0);
  }
  if (after.count > before.count) {
    f.step_ms = (after.sum - before.sum) * 1000 / (after.count - before.count);
  }
  std::vector<double> gaps;
  for (long i = 0; i < streams; ++i)
    gaps.push_back(request_stats(records[static_cast<size_t>(i)]).gaps.p50);
  f.stream_gap_p50 = median_measured(gaps);
  for (auto& r : records) out.requests.push_back(std::move(r));
  return f;
}

}  // namespace

void run_live_view(RunContext& ctx, ScenarioResult& out) {
  const long rounds = ctx.knob("rounds"), viewers = ctx.knob("viewers");
  std::vector<double> none, open, none_gap, open_gap;
  uint64_t bytes = 0;
  bool viewers_ok = true;
  for (long round = 0; round < rounds && Clock::now() < ctx.deadline(); ++round) {
    // Alternate which goes first, so a drift over the run weighs on both alike.
    for (long k = 0; k < 2; ++k) {
      const bool with = (round + k) % 2 == 1;
      PhaseFigures f = run_phase(ctx, out, with ? viewers : 0, round);
      (with ? open : none).push_back(f.step_ms);
      (with ? open_gap : none_gap).push_back(f.stream_gap_p50);
      if (with) {
        bytes += f.viewer_bytes;
        viewers_ok = viewers_ok && f.viewers_ok;
      }
    }
  }
  if (std::all_of(none.begin(), none.end(), [](double x) { return std::isnan(x); })) {
    out.notes.push_back("the server's /metrics has no baton_step_duration_seconds: no step times");
  }
  if (!viewers_ok) out.notes.push_back("the server has no GET /events: the viewers read nothing");
  const double m0 = median_measured(none), m1 = median_measured(open);
  out.figures.push_back({"mean step, no viewer (median of rounds)", m0, "ms"});
  out.figures.push_back({fmt::format("mean step, {} viewers (median)", viewers), m1, "ms"});
  out.figures.push_back({"difference", m1 - m0, "ms"});
  out.figures.push_back({"noise: spread of no-viewer rounds", spread(none), "ms"});
  out.figures.push_back(
      {fmt::format("noise: spread of {}-viewer rounds", viewers), spread(open), "ms"});
  out.figures.push_back({"streams' p50 gap, no viewer", median_measured(none_gap), "ms"});
  out.figures.push_back(
      {fmt::format("streams' p50 gap, {} viewers", viewers), median_measured(open_gap), "ms"});
  out.figures.push_back({"event bytes read per viewer",
                         viewers > 0 && !open.empty()
                             ? static_cast<double>(bytes) /
                                   static_cast<double>(viewers * static_cast<long>(open.size()))
                             : kNaN,
                         "bytes"});
}

}  // namespace baton::bench
