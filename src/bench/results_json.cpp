#include "bench/results_json.h"

#include <cmath>

#include "bench/stats.h"

namespace baton::bench {
namespace {

// JSON has no NaN; a value that was not measured is null.
nlohmann::json num(double v) {
  return std::isnan(v) || v < 0 ? nlohmann::json() : nlohmann::json(v);
}

nlohmann::json opt_num(const std::optional<long>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

// Figures keep their sign: a memory difference may be negative; only NaN becomes null.
nlohmann::json figures_json(const std::vector<Figure>& figures) {
  auto j = nlohmann::json::array();
  for (const auto& f : figures) {
    j.push_back({{"name", f.name},
                 {"value", std::isnan(f.value) ? nlohmann::json() : nlohmann::json(f.value)},
                 {"unit", f.unit}});
  }
  return j;
}

}  // namespace

nlohmann::json record_json(const RequestRecord& r) {
  auto s = request_stats(r);
  return {
      {"label", r.label},
      {"prompt_tokens_requested", r.prompt_tokens_requested},
      {"max_tokens", r.max_tokens},
      {"send_ms", num(r.send_ms)},
      {"first_byte_ms", num(r.first_byte_ms)},
      {"first_event_ms", num(r.first_event_ms)},
      {"first_token_ms", num(r.first_token_ms)},
      {"token_ms", r.token_ms},
      {"end_ms", num(r.end_ms)},
      {"http_status", r.http_status},
      {"queue_wait_ms", num(r.queue_wait_ms())},
      {"queue_wait_is_ttft_fallback", r.queue_wait_is_fallback()},
      {"usage",
       {{"prompt_tokens", opt_num(r.usage.prompt_tokens)},
        {"completion_tokens", opt_num(r.usage.completion_tokens)},
        {"cached_tokens", opt_num(r.usage.cached_tokens)}}},
      {"stats",
       {{"tokens", s.tokens},
        {"ttft_ms", num(s.ttft_ms)},
        {"gap_p50_ms", num(s.gaps.p50)},
        {"gap_p99_ms", num(s.gaps.p99)},
        {"gap_max_ms", num(s.gaps.max)},
        {"decode_tokens_per_s", s.decode_tps}}},
      {"errors", r.errors},
  };
}

nlohmann::json result_json(const ScenarioResult& r) {
  nlohmann::json j = {{"scenario", r.scenario},
                      {"server", r.server_url},
                      {"model", r.model},
                      {"wall_ms", r.wall_ms},
                      {"options", r.options},
                      {"notes", r.notes},
                      {"requests", nlohmann::json::array()}};
  for (const auto& q : r.requests) j["requests"].push_back(record_json(q));
  j["figures"] = figures_json(r.figures);
  if (!r.phases.empty()) {
    j["phases"] = nlohmann::json::array();
    for (const auto& p : r.phases)
      j["phases"].push_back({{"phase", p.name}, {"figures", figures_json(p.figures)}});
  }
  if (!r.errors.empty()) j["errors"] = r.errors;
  j["aggregate_tokens_per_s"] = aggregate_tokens_per_s(r.requests);
  return j;
}

nlohmann::json results_json(const std::vector<ScenarioResult>& runs) {
  if (runs.empty()) return nlohmann::json::object();
  nlohmann::json j = result_json(runs.front());
  if (runs.size() > 1) {
    j["compare"] = nlohmann::json::array();
    for (std::size_t i = 1; i < runs.size(); ++i) j["compare"].push_back(result_json(runs[i]));
  }
  return j;
}

}  // namespace baton::bench
