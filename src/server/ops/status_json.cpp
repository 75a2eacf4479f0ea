#include "server/ops/status_json.h"

namespace baton::server {

using nlohmann::json;

namespace {

json config_json(const sched::SchedConfig& c) {
  return {{"parallel", c.parallel},
          {"max_queue", c.max_queue},
          {"ctx", c.ctx},
          {"prefill_chunk", c.prefill_chunk},
          {"mixed_prefill_chunk", c.mixed_prefill_chunk},
          {"itl_target_ms", c.itl_target_ms},
          {"max_step_ms", c.max_step_ms},
          {"kv_ram_mb", c.kv_ram_mb},
          {"prefix_cache", c.prefix_cache},
          {"prefill_preempt", c.prefill_preempt},
          {"preempt_min_tokens", c.preempt_min_tokens},
          {"preempt_max_per_request", c.preempt_max_per_request},
          {"preempt_max_wait_s", c.preempt_max_wait_s},
          {"park_ram_mb", c.park_ram_mb},
          {"kv_disk_dir", c.kv_disk_dir},
          {"kv_disk_space_mb", c.kv_disk_space_mb},
          {"send_stall_timeout_ms", c.send_stall_timeout_ms},
          {"shutdown_grace_s", c.shutdown_grace_s}};
}

json disk_json(const sched::Metrics& m) {
  if (!m.kv_disk_enabled) return nullptr;
  return {{"bytes", m.kv_disk_bytes},
          {"budget_bytes", m.kv_disk_budget_bytes},
          {"files", m.kv_disk_files},
          {"foreign_files", m.kv_disk_foreign_files},
          {"blocks", m.kv_disk_blocks},
          {"hits", m.kv_disk_hits_total},
          {"misses", m.kv_disk_misses_total},
          {"loads", m.kv_disk_loads_total},
          {"loaded_tokens", m.kv_disk_loaded_tokens_total},
          {"saves", m.kv_disk_saves_total},
          {"saved_blocks", m.kv_disk_saved_blocks_total},
          {"evicted_files", m.kv_disk_evicted_files_total},
          {"errors", m.kv_disk_errors_total},
          {"loading_requests", m.loading_requests},
          {"loop_io_seconds", m.step_io_wait_seconds}};
}

json request_json(const sched::RequestStatus& r) {
  json j = {{"id", r.id},
            {"state", sched::state_name(r.state)},
            {"prompt_tokens", r.prompt_tokens},
            {"prompt_done", r.prompt_done},
            {"cached_tokens", r.cached_tokens},
            {"generated", r.generated},
            {"ms_waited", r.ms_waited},
            {"disk_tokens", r.disk_tokens},
            {"max_gap_ms", r.max_gap_ms}};
  if (r.ttft_ms > 0) {
    j["ttft_ms"] = r.ttft_ms;
    j["tokens_per_s"] = r.tokens_per_s;
  }
  if (r.drafted_tokens > 0) {
    j["drafted_tokens"] = r.drafted_tokens;
    j["accepted_tokens"] = r.accepted_tokens;
  }
  if (r.state == sched::RequestState::Parked) {
    j["why"] = r.parked_why;
    j["position"] = r.position;
    j["ms_parked"] = r.ms_parked;
    j["blocks_kept"] = r.blocks_kept;
    j["parks"] = r.parks;
  }
  return j;
}

}  // namespace

json side_json(const sched::AffinityTotals::Side& s) {
  return {{"requests", s.requests},
          {"prompt_tokens", s.prompt_tokens},
          {"cached_tokens", s.cached_tokens}};
}

// Whether a proxy in front keeps conversations here: the recent sessions' own figures and the
// totals by new/returning session.
json sessions_json(const sched::StatusSnapshot& s) {
  json recent = json::array();
  for (const auto& f : s.sessions) {
    recent.push_back({{"id", f.id},
                      {"requests", f.requests},
                      {"prompt_tokens", f.prompt_tokens},
                      {"cached_tokens", f.cached_tokens},
                      {"idle_s", f.idle_s}});
  }
  const auto& a = s.metrics.affinity;
  return {{"tracked", a.sessions},
          {"new", side_json(a.fresh)},
          {"returning", side_json(a.returning)},
          {"recent", recent}};
}

json status_json(const sched::StatusSnapshot& s, const std::string& model) {
  const auto& m = s.metrics;
  json running = json::array(), waiting = json::array(), parked = json::array();
  for (const auto& r : s.requests) {
    json& list = r.state == sched::RequestState::Queued   ? waiting
                 : r.state == sched::RequestState::Parked ? parked
                                                          : running;
    list.push_back(request_json(r));
  }
  return {{"model", model},
          {"draining", m.draining},
          {"config", config_json(s.config)},
          {"running", running},
          {"waiting", waiting},
          {"parked", parked},
          {"kv",
           {{"blocks_total", m.kv_blocks_total},
            {"blocks_used", m.kv_blocks_used},
            {"blocks_cached", m.kv_blocks_cached},
            {"usage_ratio", m.kv_usage_ratio}}},
          {"kv_disk", disk_json(m)},
          {"sessions", sessions_json(s)},
          {"totals",
           {{"requests", m.requests_total},
            {"steps", m.steps_total},
            {"prompt_tokens", m.prompt_tokens_total},
            {"generation_tokens", m.generation_tokens_total},
            {"prefix_cache_queries", m.prefix_cache_queries_total},
            {"prefix_cache_hits", m.prefix_cache_hits_total},
            {"prefix_cache_reused_tokens", m.prefix_cache_reused_tokens_total},
            {"max_decode_gap_seconds", m.max_decode_gap_seconds},
            {"max_queue_wait_ms", m.max_queue_wait_ms},
            {"kv_preemptions", m.kv_preemptions_total},
            {"prefill_preemptions", m.prefill_preemptions_total},
            {"prefill_resumes", m.prefill_resumes_total}}}};
}

}  // namespace baton::server
