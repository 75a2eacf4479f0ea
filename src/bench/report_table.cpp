#include "bench/report_table.h"

#include <fmt/format.h>

#include <cmath>

#include "bench/stats.h"

namespace baton::bench {
namespace {

// A metric comparable across servers: headline figures plus the overall row.
struct Metric {
  std::string name, unit;
  double value;
};

std::vector<Metric> metrics(const ScenarioResult& r) {
  std::vector<Metric> m;
  for (const auto& f : r.figures) m.push_back({f.name, f.unit, f.value});
  std::vector<double> gaps;
  for (const auto& q : r.requests) {
    auto g = token_gaps(q.token_ms);
    gaps.insert(gaps.end(), g.begin(), g.end());
    m.push_back({q.label + " TTFT", "ms", q.ttft_ms()});
  }
  auto s = summarize(gaps);
  m.push_back({"p50 gap (all)", "ms", s.p50});
  m.push_back({"p99 gap (all)", "ms", s.p99});
  m.push_back({"max gap (all)", "ms", s.max});
  m.push_back({"overall throughput", "tok/s", aggregate_tokens_per_s(r.requests)});
  return m;
}

// Rows are matched by name: a server whose run broke off early has fewer requests, and pairing by
// position would put its throughput beside the other's TTFT.
double value_named(const std::vector<Metric>& ms, const std::string& name) {
  for (const auto& m : ms)
    if (m.name == name) return m.value;
  return NAN;
}

std::string request_row(const std::string& label, const RequestRecord& q) {
  auto s = request_stats(q);
  std::string wait = fmt_ms(s.queue_wait_ms) + (q.queue_wait_is_fallback() ? "*" : "");
  return fmt::format("{:<16} {:>9} {:>9} {:>6} {:>8} {:>8} {:>8} {:>8} {:>9} {}\n", label, wait,
                     fmt_ms(s.ttft_ms), s.tokens, fmt_ms(s.gaps.p50), fmt_ms(s.gaps.p99),
                     fmt_ms(s.gaps.max), fmt_ms(s.decode_tps), fmt_ms(s.total_ms),
                     q.ok() ? "" : "ERROR");
}

// Phases side by side: one row per figure, one column per phase. Signed, since a memory
// difference can be negative when the allocator gives pages back.
std::string phase_grid(const std::vector<Phase>& phases) {
  auto cell = [](double v) {
    if (std::isnan(v)) return std::string("-");
    return std::fabs(v) >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.1f}", v);
  };
  std::string out = fmt::format("{:<36}", "figure");
  for (const auto& p : phases) out += fmt::format(" {:>10}", p.name);
  out += "\n";
  for (std::size_t row = 0; row < phases.front().figures.size(); ++row) {
    const Figure& f = phases.front().figures[row];
    std::string name = f.unit.empty() ? f.name : f.name + " (" + f.unit + ")";
    out += fmt::format("{:<36}", name);
    for (const auto& p : phases)
      out += fmt::format(" {:>10}", row < p.figures.size() ? cell(p.figures[row].value) : "-");
    out += "\n";
  }
  return out;
}

std::string request_table(const ScenarioResult& r) {
  std::string out =
      fmt::format("{:<16} {:>9} {:>9} {:>6} {:>8} {:>8} {:>8} {:>8} {:>9}\n", "request", "queue ms",
                  "TTFT ms", "tokens", "p50 gap", "p99 gap", "max gap", "tok/s", "total ms");
  bool fallback = false;
  std::vector<double> gaps;
  for (const auto& q : r.requests) {
    out += request_row(q.label.substr(0, 16), q);
    fallback = fallback || q.queue_wait_is_fallback();
    auto g = token_gaps(q.token_ms);
    gaps.insert(gaps.end(), g.begin(), g.end());
  }
  auto s = summarize(gaps);
  out += fmt::format("{:<16} {:>9} {:>9} {:>6} {:>8} {:>8} {:>8} {:>8}\n", "overall", "", "", "",
                     fmt_ms(s.p50), fmt_ms(s.p99), fmt_ms(s.max),
                     fmt_ms(aggregate_tokens_per_s(r.requests)));
  if (fallback) {
    out +=
        "* queue wait = TTFT: the server sent keepalive comments (or nothing) before the "
        "first token\n";
  }
  return out;
}

}  // namespace

std::string fmt_ms(double v) {
  if (std::isnan(v) || v < 0) return "-";
  return v >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.1f}", v);
}

std::string render_table(const ScenarioResult& r) {
  std::string out = fmt::format("scenario {} against {} (model {}), {:.1f} s\n", r.scenario,
                                r.server_url, r.model, r.wall_ms / 1000);
  // A phase scenario has no per-request rows worth printing.
  if (!r.requests.empty() || r.phases.empty()) out += request_table(r);
  if (!r.phases.empty()) out += phase_grid(r.phases);
  if (!r.figures.empty()) out += "headline:\n";
  for (const auto& f : r.figures) {
    std::string value =
        f.unit == "x" && !std::isnan(f.value) ? fmt::format("{:.2f}", f.value) : fmt_ms(f.value);
    out += fmt::format("  {:<32} {:>10} {}\n", f.name, value, f.unit);
  }
  for (const auto& q : r.requests) {
    for (const auto& e : q.errors) out += fmt::format("error: {}: {}\n", q.label, e);
  }
  for (const auto& e : r.errors) out += "error: " + e + "\n";
  for (const auto& n : r.notes) out += "note: " + n + "\n";
  return out;
}

std::string render_comparison(const std::vector<ScenarioResult>& results) {
  if (results.empty()) return "";
  std::string out =
      fmt::format("comparison ({}); ratio = server N / server 1\n", results.front().scenario);
  for (std::size_t i = 0; i < results.size(); ++i) {
    out += fmt::format("  server {}: {}\n", i + 1, results[i].server_url);
  }
  out += fmt::format("{:<34}", "metric");
  for (std::size_t i = 0; i < results.size(); ++i) out += fmt::format(" {:>10}", i + 1);
  for (std::size_t i = 1; i < results.size(); ++i)
    out += fmt::format(" {:>8}", fmt::format("{}/1", i + 1));
  out += "\n";
  std::vector<std::vector<Metric>> ms;
  for (const auto& r : results) ms.push_back(metrics(r));
  for (std::size_t row = 0; row < ms[0].size(); ++row) {
    const Metric& base = ms[0][row];
    out += fmt::format("{:<34}", (base.name + " (" + base.unit + ")").substr(0, 34));
    for (const auto& m : ms) out += fmt::format(" {:>10}", fmt_ms(value_named(m, base.name)));
    for (std::size_t i = 1; i < ms.size(); ++i) {
      const double v = value_named(ms[i], base.name);
      bool ok = base.value > 0 && v >= 0 && !std::isnan(v);
      out += fmt::format(" {:>8}", ok ? fmt::format("{:.2f}x", v / base.value) : "-");
    }
    out += "\n";
  }
  return out;
}

}  // namespace baton::bench
