#pragma once
// The /status document: scheduler configuration, every running and waiting request, KV usage
// and totals.
#include <nlohmann/json.hpp>

#include "sched/engine_loop.h"

namespace baton::server {

nlohmann::json status_json(const sched::StatusSnapshot& s, const std::string& model);

}  // namespace baton::server
