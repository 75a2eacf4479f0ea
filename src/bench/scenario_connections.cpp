// The connections scenario: what open connections cost the server, and whether it keeps
// answering while they are open. Phase "idle" holds N keep-alive connections that each
// completed a GET /health; phase "streams" holds N streaming completions at once, most of them
// queued behind --parallel. Around each phase the server's /metrics gives RSS, open fds and
// open connections, and /health is timed on an ordinary connection while they are open.
#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <limits>
#include <thread>

#include "bench/conn_pool.h"
#include "bench/scenario_runner.h"
#include "bench/stats.h"

namespace baton::bench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kFdMargin = 64;  // stdio, the probe and /metrics connections, libraries
constexpr double kProbeTimeoutS = 10;

struct Snapshot {
  double rss_mb = kNaN, fds = kNaN, conns = kNaN, waiting = kNaN;
};

Snapshot snapshot(const Endpoint& ep) {
  auto body = fetch_metrics(ep, kProbeTimeoutS);
  auto get = [&](const char* name) {
    auto v = body ? find_sample(*body, name) : std::nullopt;
    return v ? *v : kNaN;
  };
  return {get("process_resident_memory_bytes") / (1024.0 * 1024.0), get("process_open_fds"),
          get("baton_http_open_connections"), get("baton_requests_waiting")};
}

// The server notices closed connections asynchronously; wait until its count is back near
// where it was before the phase (or 3 s) so "after" is not read mid-teardown.
Snapshot snapshot_after(const Endpoint& ep, const Snapshot& before) {
  auto give_up = Clock::now() + std::chrono::seconds(3);
  Snapshot s = snapshot(ep);
  while (!std::isnan(s.conns) && s.conns > before.conns + 1 && Clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    s = snapshot(ep);
  }
  return s;
}

// Drives the pool until `done` holds for its counts or the deadline passes.
PoolCounts pump_until(ConnPool& pool, Clock::time_point deadline,
                      const std::function<bool(const PoolCounts&)>& done) {
  for (;;) {
    auto k = pool.counts();
    if (done(k) || Clock::now() >= deadline) return k;
    pool.pump(20);
  }
}

bool all_settled(const PoolCounts& k) {
  return k.settled >= k.opened;
}

// Everything one phase measured, before it becomes figures.
struct PhaseRun {
  Snapshot before, with, after;
  std::vector<double> health_before, health_with;
  PoolCounts at_with, end;
  std::size_t open_at_with = 0;  // connections (or unfinished streams) held at the snapshot
  double wall_s = 0;
};

double per_conn_kb(const PhaseRun& p) {
  if (p.open_at_with == 0) return kNaN;
  return (p.with.rss_mb - p.before.rss_mb) * 1024.0 / static_cast<double>(p.open_at_with);
}

double p50(const std::vector<double>& v) {
  return v.empty() ? kNaN : median(v);
}

double maxv(const std::vector<double>& v) {
  return v.empty() ? kNaN : summarize(v).max;
}

Phase to_phase(const std::string& name, const PhaseRun& p, bool streams) {
  auto n = [](std::size_t v) { return static_cast<double>(v); };
  Phase ph{name, {}};
  auto add = [&](std::string f, double v, std::string unit) {
    ph.figures.push_back({std::move(f), v, std::move(unit)});
  };
  add("connections opened", n(p.end.opened), "");
  add("accepted (200)", n(p.end.ok), "");
  add("rejected (503)", n(p.end.rejected), "");
  add("failed or other status", n(p.end.failed + p.end.other_status), "");
  add("held at the snapshot", n(p.open_at_with), "");
  add("server RSS before", p.before.rss_mb, "MB");
  add("server RSS with them open", p.with.rss_mb, "MB");
  add("server RSS after", p.after.rss_mb, "MB");
  add("RSS per held connection", per_conn_kb(p), "KB");
  add("open fds before", p.before.fds, "");
  add("open fds with them open", p.with.fds, "");
  add("open fds after", p.after.fds, "");
  add("server open connections with", p.with.conns, "");
  add("requests waiting with", streams ? p.with.waiting : kNaN, "");
  add("/health p50 before", p50(p.health_before), "ms");
  add("/health p50 with them open", p50(p.health_with), "ms");
  add("/health max with them open", maxv(p.health_with), "ms");
  add("streams finished ([DONE])", streams ? n(p.end.done_events) : kNaN, "");
  add("streams that got a keepalive", streams ? n(p.end.saw_keepalive) : kNaN, "");
  add("phase wall time", p.wall_s, "s");
  return ph;
}

class ConnectionsRun {
 public:
  ConnectionsRun(RunContext& ctx, ScenarioResult& out) : ctx_(ctx), out_(out) {}

  void run() {
    long want = ctx_.knob("connections");
    probes_ = std::max(1L, ctx_.knob("health-probes"));
    n_ = fit_fd_limit(static_cast<std::size_t>(want));
    host_ = ConnPool(ctx_.endpoint()).host_header();  // also rejects https up front
    PhaseRun idle = run_phase(health_request(), false);
    warm_up();
    PhaseRun streams = run_phase(stream_request_text(), true);
    out_.phases = {to_phase("idle", idle, false), to_phase("streams", streams, true)};
    out_.figures = {{"RSS per idle connection", per_conn_kb(idle), "KB"},
                    {"RSS per queued stream", per_conn_kb(streams), "KB"},
                    {"/health max with streams open", maxv(streams.health_with), "ms"},
                    {"streams finished", static_cast<double>(streams.end.done_events), ""}};
    judge(idle, streams);
  }

 private:
  // The client needs a descriptor per connection; say so plainly when the limit is short.
  std::size_t fit_fd_limit(std::size_t want) {
    std::size_t hard = 0, soft = raise_fd_limit(want + kFdMargin, &hard);
    if (soft >= want + kFdMargin) return want;
    std::size_t fit = soft > kFdMargin ? soft - kFdMargin : 0;
    out_.notes.push_back(fmt::format(
        "the open-file limit allows {} descriptors (hard limit {}), not the {} that {} "
        "connections need: ran with {}; raise it with `ulimit -n` (root can raise the hard "
        "limit)",
        soft, hard, want + kFdMargin, want, fit));
    return fit;
  }

  std::string health_request() const {
    return "GET " + ctx_.endpoint().base_path + "/health HTTP/1.1\r\nHost: " + host_ + "\r\n\r\n";
  }

  std::string stream_request_text() {
    // One small prompt for every stream: the phase measures connections, not prefill.
    auto req = ctx_.completion("stream", ctx_.knob("prompt-tokens"), ctx_.knob("decode-tokens"), 1);
    std::string body = request_body(req).dump();
    std::string head = "POST " + ctx_.endpoint().base_path +
                       "/v1/completions HTTP/1.1\r\nHost: " + host_ +
                       "\r\nContent-Type: application/json\r\nAccept: text/event-stream\r\n"
                       "Connection: close\r\nContent-Length: " +
                       std::to_string(body.size()) + "\r\n";
    if (!ctx_.endpoint().api_key.empty()) {
      head += "Authorization: Bearer " + ctx_.endpoint().api_key + "\r\n";
    }
    return head + "\r\n" + body;
  }

  // The first generation allocates the engine's scratch buffers; that is not a stream's cost.
  void warm_up() {
    auto rec = stream_request(ctx_.endpoint(), ctx_.completion("warm-up", 8, 2, 2), ctx_.t0(),
                              ctx_.deadline());
    if (!rec.ok()) out_.notes.push_back("warm-up request failed: " + rec.errors.front());
  }

  PhaseRun run_phase(const std::string& request, bool streams) {
    const Endpoint& ep = ctx_.endpoint();
    PhaseRun p;
    p.before = snapshot(ep);
    p.health_before = health_latencies_ms(ep, probes_, kProbeTimeoutS);
    auto t = Clock::now();
    auto deadline =
        std::min(ctx_.deadline(),
                 t + std::chrono::milliseconds(static_cast<long>(ctx_.options().timeout_s * 1000)));
    ConnPool pool(ep);
    pool.open(n_, request);
    // Idle: every connection has its answer. Streams: every stream has its head, so all of
    // them are held by the server at once (running, queued, or already done).
    p.at_with = pump_until(pool, deadline, [streams](const PoolCounts& k) {
      return streams ? k.headed + k.failed >= k.opened : all_settled(k);
    });
    p.open_at_with =
        streams ? p.at_with.ok - std::min(p.at_with.ok, p.at_with.done_events) : p.at_with.open;
    p.with = snapshot(ep);
    // For streams the server's own count is exact at the moment of the snapshot; the client's
    // lags behind streams the server already finished but we have not read yet. Idle
    // connections are all settled, so the client's count is exact, while the server's delta
    // can be off by the short-lived connections the /metrics and /health probes use.
    if (streams && !std::isnan(p.with.conns) && !std::isnan(p.before.conns) &&
        p.with.conns > p.before.conns)
      p.open_at_with = static_cast<std::size_t>(p.with.conns - p.before.conns);
    p.health_with = health_latencies_ms(ep, probes_, kProbeTimeoutS);
    if (streams) pump_until(pool, deadline, all_settled);
    pool.pump(0);  // notice what the server closed meanwhile
    p.end = pool.counts();
    p.wall_s = std::chrono::duration<double>(Clock::now() - t).count();
    pool.close_all();
    p.after = snapshot_after(ep, p.before);
    return p;
  }

  void judge(const PhaseRun& idle, const PhaseRun& streams) {
    for (const auto* p : {&idle, &streams}) {
      const char* what = p == &idle ? "idle" : "streams";
      const auto& k = p->end;
      if (k.failed + k.other_status > 0) {
        out_.errors.push_back(fmt::format("{}: {} of {} connections failed; first: {}", what,
                                          k.failed + k.other_status, k.opened, k.first_error));
      }
      if (k.rejected > 0) {
        out_.notes.push_back(
            fmt::format("{}: the server refused {} with 503 (--max-connections, --max-queue)", what,
                        k.rejected));
      }
      if (std::isnan(p->with.rss_mb)) {
        out_.notes.push_back(std::string(what) +
                             ": the server's /metrics has no process_resident_memory_bytes");
      }
      if (p->health_with.size() < static_cast<std::size_t>(probes_)) {
        out_.errors.push_back(fmt::format("{}: {} of {} /health probes failed with them open", what,
                                          probes_ - static_cast<long>(p->health_with.size()),
                                          probes_));
      }
    }
    out_.notes.push_back(
        "RSS figures are growth: memory freed by the idle phase (or an earlier run) is reused "
        "by the next, so read per-connection costs off a freshly started server");
    if (idle.end.server_closed > 0) {
      out_.notes.push_back(
          fmt::format("idle: the server closed {} held connections (its idle timeout or eviction)",
                      idle.end.server_closed));
    }
    const auto& s = streams.end;
    if (s.done_events < s.ok) {
      out_.errors.push_back(fmt::format("streams: {} of {} accepted streams did not finish",
                                        s.ok - s.done_events, s.ok));
    }
  }

  RunContext& ctx_;
  ScenarioResult& out_;
  std::size_t n_ = 0;
  long probes_ = 20;
  std::string host_;
};

}  // namespace

void run_connections(RunContext& ctx, ScenarioResult& out) {
  ConnectionsRun(ctx, out).run();
}

}  // namespace baton::bench
