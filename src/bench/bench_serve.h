#pragma once
// `baton bench serve`: resolve the model, run one scenario against one server (or two, with
// --compare), print the report, write the raw JSON and the SVG timeline.
#include <ostream>
#include <string>

#include "bench/scenarios.h"

namespace baton::bench {

struct BenchServeOptions {
  std::string url = "http://127.0.0.1:8080";
  std::string compare_url;  // empty: one server only
  std::string api_key;
  std::string scenario;
  std::string out_dir;        // empty: no files
  double run_limit_s = 3600;  // the whole invocation, all servers together
  ScenarioOptions scenario_options;
};

// Returns the process exit status: 0 when every request succeeded, 1 otherwise (the failures
// are listed in the report). Throws BenchError for failures that stop the bench outright.
int run_bench_serve(const BenchServeOptions& opt, std::ostream& out, std::ostream& err);

}  // namespace baton::bench
