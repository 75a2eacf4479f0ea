#pragma once
// The plain-text report printed on stdout: per-request timings, an overall row, the scenario's
// headline figures; with two servers, a side-by-side comparison with ratios.
#include <string>
#include <vector>

#include "bench/scenarios.h"

namespace baton::bench {

std::string render_table(const ScenarioResult& r);

// `results` holds the same scenario against several servers; ratios are against the first.
std::string render_comparison(const std::vector<ScenarioResult>& results);

// "12.3" for a number, "-" for NaN / negative (not measured).
std::string fmt_ms(double v);

}  // namespace baton::bench
