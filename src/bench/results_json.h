#pragma once
// The raw JSON written to DIR/<scenario>.json: every timing of every request, so a later tool
// can recompute any figure.
#include <nlohmann/json.hpp>

#include "bench/scenarios.h"

namespace baton::bench {

nlohmann::json record_json(const RequestRecord& r);
nlohmann::json result_json(const ScenarioResult& r);

// The first run's fields at the top level; further servers (--compare) under "compare".
nlohmann::json results_json(const std::vector<ScenarioResult>& runs);

}  // namespace baton::bench
