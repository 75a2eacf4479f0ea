#include "bench/bench_serve.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "bench/report_table.h"
#include "bench/results_json.h"
#include "bench/svg_timeline.h"

namespace baton::bench {
namespace {

void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
  f.close();
  if (!f) throw BenchError("cannot write " + p.string() + " (check --out and its permissions)");
}

void write_outputs(const std::string& dir, const std::vector<ScenarioResult>& runs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw BenchError("cannot create --out " + dir + ": " + ec.message());
  std::filesystem::path base = std::filesystem::path(dir) / runs.front().scenario;
  write_file(base.string() + ".json", results_json(runs).dump(1) + "\n");
  write_file(base.string() + ".svg", render_svg(runs.front()));
  for (std::size_t i = 1; i < runs.size(); ++i) {
    write_file(base.string() + ".compare" + (i > 1 ? std::to_string(i) : "") + ".svg",
               render_svg(runs[i]));
  }
}

// A stream that is in every step never waits longer than the longest step, so its worst gap
// divided by the server's longest mixed step tells whether it ever missed a step (about 1) or
// was starved (2 or more). Only servers that export baton_max_step_seconds give it; the
// counter is since server start, so run the scenario on a freshly started server.
void add_step_figures(const Endpoint& ep, ScenarioResult& result) {
  if (!result.phases.empty()) return;  // a phase scenario times no token gaps
  auto longest = metric_sample(ep, "baton_max_step_seconds{kind=\"mixed\"}", 10);
  if (!longest || *longest <= 0) return;
  result.figures.push_back({"longest mixed step (server)", *longest * 1000, "ms"});
  for (const auto& f : result.figures) {
    if (f.name == "A worst gap while B prefills" && !std::isnan(f.value)) {
      result.figures.push_back(
          {"A worst gap / longest mixed step", f.value / (*longest * 1000), "x"});
      break;
    }
  }
}

ScenarioResult run_one(const BenchServeOptions& opt, const std::string& url,
                       Clock::time_point deadline) {
  Endpoint ep = parse_endpoint(url, opt.api_key);
  ScenarioOptions so = opt.scenario_options;
  if (so.model.empty()) so.model = first_model_id(ep, std::min(30.0, so.timeout_s));
  ScenarioResult result = run_scenario(opt.scenario, ep, so, deadline);
  add_step_figures(ep, result);
  return result;
}

}  // namespace

int run_bench_serve(const BenchServeOptions& opt, std::ostream& out, std::ostream& err) {
  if (!is_scenario(opt.scenario)) run_scenario(opt.scenario, {}, {}, Clock::now());  // throws
  auto deadline =
      Clock::now() + std::chrono::milliseconds(static_cast<long>(opt.run_limit_s * 1000));
  std::vector<std::string> urls = {opt.url};
  if (!opt.compare_url.empty()) urls.push_back(opt.compare_url);
  for (const auto& u : urls) parse_endpoint(u);  // reject a bad URL before any run starts
  std::vector<ScenarioResult> runs;
  for (const auto& u : urls) {
    runs.push_back(run_one(opt, u, deadline));
    out << render_table(runs.back()) << "\n";
    out.flush();
  }
  if (runs.size() > 1) out << render_comparison(runs) << "\n";
  if (!opt.out_dir.empty()) {
    write_outputs(opt.out_dir, runs);
    out << "wrote " << opt.out_dir << "/" << opt.scenario << ".json and .svg\n";
  }
  std::size_t failed = 0, total = 0;
  std::string first;
  bool checks_failed = false;  // a phase scenario's own checks (connections)
  for (const auto& r : runs) {
    for (const auto& e : r.errors) {
      err << "baton: error: " << r.scenario << ": " << e << "\n";
      checks_failed = true;
    }
    for (const auto& q : r.requests) {
      ++total;
      if (q.ok()) continue;
      if (failed++ == 0) first = q.label + ": " + q.errors.front();
    }
  }
  if (failed == 0) return checks_failed ? 1 : 0;
  err << "baton: error: " << failed << " of " << total << " requests failed; first: " << first
      << "\n";
  return 1;
}

}  // namespace baton::bench
