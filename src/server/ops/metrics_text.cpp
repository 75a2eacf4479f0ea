#include "server/ops/metrics_text.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <type_traits>

namespace baton::server {

namespace {

// The exposition format spells non-finite values as Go does, not as fmt does ("inf", "nan").
std::string value_text(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

// Integers print exactly: a counter past 2^53 would lose digits as a double.
template <typename T>
std::string value_text(T v) requires std::is_integral_v<T> {
  return fmt::format("{}", v);
}

std::string escape_label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string label_text(const std::string& v) {
  return escape_label(v);
}
std::string label_text(int v) {
  return fmt::format("{}", v);
}

void header(std::string& out, const char* name, const char* type, const char* help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

template <typename T>
void scalar(std::string& out, const char* name, const char* type, const char* help, T value) {
  header(out, name, type, help);
  out += fmt::format("{} {}\n", name, value_text(value));
}

template <typename T>
void counter(std::string& out, const char* name, const char* help, T value) {
  scalar(out, name, "counter", help, value);
}

template <typename T>
void gauge(std::string& out, const char* name, const char* help, T value) {
  scalar(out, name, "gauge", help, value);
}

// A process_* figure that could not be read is left out rather than exported as a false 0.
template <typename T>
void optional_scalar(std::string& out, const char* name, const char* type, const char* help,
                     const std::optional<T>& value) {
  if (value) scalar(out, name, type, help, *value);
}

void histogram(std::string& out, const char* name, const char* help, const sched::Histogram& h) {
  header(out, name, "histogram", help);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < h.bounds.size(); ++i) {
    if (i < h.counts.size()) cumulative += h.counts[i];
    out += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, value_text(h.bounds[i]), cumulative);
  }
  out += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n", name, h.count);
  out += fmt::format("{}_sum {}\n{}_count {}\n", name, value_text(h.sum), name, h.count);
}

template <typename Map>
void labelled(std::string& out, const char* name, const char* label, const char* type,
              const char* help, const Map& values) {
  header(out, name, type, help);
  for (const auto& [k, v] : values) {
    out += fmt::format("{}{{{}=\"{}\"}} {}\n", name, label, label_text(k), value_text(v));
  }
}

void latency_histograms(std::string& out, const sched::Metrics& m) {
  histogram(out, "baton_time_to_first_token_seconds", "Time from arrival to the first token.",
            m.time_to_first_token);
  histogram(out, "baton_inter_token_latency_seconds", "Time between consecutive tokens.",
            m.inter_token_latency);
  histogram(out, "baton_request_queue_time_seconds", "Time a request waited before prefill.",
            m.queue_time);
  histogram(out, "baton_e2e_request_latency_seconds", "Time from arrival to the last token.",
            m.e2e_latency);
  histogram(out, "baton_step_duration_seconds",
            "Time one engine step took (one forward pass of a mixed batch).", m.step_duration);
}

void scheduler_gauges(std::string& out, const sched::Metrics& m) {
  gauge(out, "baton_draining",
        "1 while shutting down: no new requests are admitted and /health answers 503.",
        m.draining ? 1 : 0);
  gauge(out, "baton_requests_running", "Requests prefilling or decoding.", m.requests_running);
  gauge(out, "baton_requests_waiting", "Requests queued.", m.requests_waiting);
  gauge(out, "baton_parked_requests", "Requests out of their slot, waiting to resume.",
        m.parked_requests);
  counter(out, "baton_kv_preemptions_total",
          "Requests parked because decode rows needed KV blocks the pool no longer had.",
          m.kv_preemptions_total);
  counter(out, "baton_prefill_preemptions_total",
          "Long prefills parked so that a short request could take the slot.",
          m.prefill_preemptions_total);
  counter(out, "baton_prefill_resumes_total", "Parked requests that took a slot again.",
          m.prefill_resumes_total);
  gauge(out, "baton_max_decode_gap_seconds", "Worst inter-token gap of any stream since start.",
        m.max_decode_gap_seconds);
  gauge(out, "baton_max_queue_wait_seconds", "Longest queue wait of any request since start.",
        m.max_queue_wait_ms / 1000.0);
  labelled(out, "baton_max_step_seconds", "kind", "gauge",
           "Longest engine step of each kind since start.", m.max_step_seconds);
}

void kv_cache(std::string& out, const sched::Metrics& m) {
  gauge(out, "baton_kv_cache_usage_ratio", "KV blocks held by live requests / pool.",
        m.kv_usage_ratio);
  gauge(out, "baton_kv_cache_capacity_blocks", "KV blocks in the pool.", m.kv_blocks_total);
  // The form of vLLM's cache_config_info, which routers that read replicas' cache geometry (the
  // Gateway API Inference Extension's endpoint picker) take with their metric name set to it.
  header(out, "baton_kv_cache_config_info", "gauge",
         "The KV cache's geometry as labels: positions per block and blocks in the pool.");
  out += fmt::format("baton_kv_cache_config_info{{block_size=\"{}\",num_gpu_blocks=\"{}\"}} 1\n",
                     m.kv_block_tokens, m.kv_blocks_total);
  gauge(out, "baton_kv_cache_used_blocks", "KV blocks pinned by live requests.", m.kv_blocks_used);
  gauge(out, "baton_kv_cache_cached_blocks", "Free KV blocks still holding a reusable prefix.",
        m.kv_blocks_cached);
  counter(out, "baton_kv_cache_evictions_total", "Cached KV blocks dropped to make room.",
          m.kv_evictions_total);
  counter(out, "baton_prefix_cache_queries_total", "Prefix cache lookups.",
          m.prefix_cache_queries_total);
  counter(out, "baton_prefix_cache_hits_total", "Prefix cache lookups that reused KV.",
          m.prefix_cache_hits_total);
  counter(out, "baton_prefix_cache_reused_tokens_total",
          "Prompt tokens taken from the prefix cache instead of computed.",
          m.prefix_cache_reused_tokens_total);
  if (m.state_checkpoint_slots == 0) return;  // not a hybrid model, or no checkpoints
  gauge(out, "baton_state_checkpoint_capacity", "Recurrent-state checkpoints --state-ram-mb holds.",
        m.state_checkpoint_slots);
  gauge(out, "baton_state_checkpoints", "Recurrent-state checkpoints held.", m.state_checkpoints);
  gauge(out, "baton_state_checkpoint_bytes", "Memory of the recurrent-state checkpoints held.",
        m.state_checkpoint_bytes);
  counter(out, "baton_state_checkpoints_taken_total", "Recurrent-state checkpoints taken.",
          m.state_checkpoints_taken_total);
  counter(out, "baton_state_restores_total",
          "Requests that started their recurrent state from a checkpoint.", m.state_restores_total);
  counter(out, "baton_state_checkpoint_evictions_total",
          "Recurrent-state checkpoints dropped to make room.", m.state_checkpoint_evictions_total);
}

void kv_disk(std::string& out, const sched::Metrics& m) {
  gauge(out, "baton_step_io_wait_seconds",
        "Time the engine loop spent on the KV disk tier (it never waits for the disk itself).",
        m.step_io_wait_seconds);
  gauge(out, "baton_loading_requests", "Requests whose prefix is being read from the disk tier.",
        m.loading_requests);
  if (!m.kv_disk_enabled) return;
  gauge(out, "baton_kv_disk_bytes", "Bytes of KV segment files in --kv-disk-dir.", m.kv_disk_bytes);
  gauge(out, "baton_kv_disk_budget_bytes", "--kv-disk-space-mb in bytes.", m.kv_disk_budget_bytes);
  gauge(out, "baton_kv_disk_files", "KV segment files of this model.", m.kv_disk_files);
  gauge(out, "baton_kv_disk_blocks", "KV blocks of this model on disk.", m.kv_disk_blocks);
  counter(out, "baton_kv_disk_hits_total", "Admissions that found part of their prefix on disk.",
          m.kv_disk_hits_total);
  counter(out, "baton_kv_disk_misses_total",
          "Admissions that looked for their prefix on disk and found none.",
          m.kv_disk_misses_total);
  counter(out, "baton_kv_disk_saves_total", "KV segment files written.", m.kv_disk_saves_total);
  counter(out, "baton_kv_disk_loads_total", "Prefix loads from disk completed.",
          m.kv_disk_loads_total);
  counter(out, "baton_kv_disk_loaded_tokens_total",
          "Prompt positions restored from disk instead of computed.",
          m.kv_disk_loaded_tokens_total);
  counter(out, "baton_kv_disk_evicted_files_total",
          "Segment files removed to stay within --kv-disk-space-mb.",
          m.kv_disk_evicted_files_total);
  std::map<std::string, uint64_t> errors = m.kv_disk_errors_total;
  for (const char* k : {"truncated", "bad_magic", "version", "checksum", "model", "layout", "io"}) {
    errors.emplace(k, 0);
  }
  labelled(out, "baton_kv_disk_errors_total", "kind", "counter",
           "Segment files skipped (and deleted) or writes that failed, by kind.", errors);
  histogram(out, "baton_kv_disk_load_seconds", "Time to read one request's prefix from disk.",
            m.kv_disk_load_seconds);
  histogram(out, "baton_kv_disk_save_seconds", "Time to write one segment file.",
            m.kv_disk_save_seconds);
}

void work_counters(std::string& out, const sched::Metrics& m) {
  counter(out, "baton_prompt_tokens_total", "Prompt tokens of admitted requests.",
          m.prompt_tokens_total);
  counter(out, "baton_generation_tokens_total", "Tokens generated.", m.generation_tokens_total);
  counter(out, "baton_prefill_tokens_total", "Prompt tokens computed by engine steps.",
          m.prefill_tokens_total);
  counter(out, "baton_decode_rows_total", "Decode rows computed by engine steps.",
          m.decode_rows_total);
  labelled(out, "baton_requests_total", "status", "counter", "Finished requests by outcome.",
           m.requests_total);
  labelled(out, "baton_steps_total", "kind", "counter", "Engine steps by kind.", m.steps_total);
}

// Totals by new/returning session, never a label per session: the session table is bounded and
// a label per conversation would grow the exposition without limit.
void affinity_counters(std::string& out, const sched::AffinityTotals& a) {
  const auto by_side = [&](auto field) {
    return std::map<std::string, uint64_t>{{"new", a.fresh.*field},
                                           {"returning", a.returning.*field}};
  };
  using Side = sched::AffinityTotals::Side;
  labelled(out, "baton_session_requests_total", "session", "counter",
           "Requests that named their session (x-session-affinity, prompt_cache_key, ...), by "
           "whether this replica had served the session before.",
           by_side(&Side::requests));
  labelled(out, "baton_session_prompt_tokens_total", "session", "counter",
           "Prompt tokens of requests that named their session.", by_side(&Side::prompt_tokens));
  labelled(out, "baton_session_cached_tokens_total", "session", "counter",
           "Prompt tokens of requests that named their session served from the RAM or disk cache.",
           by_side(&Side::cached_tokens));
  gauge(out, "baton_sessions", "Sessions in the bounded table of recently seen sessions.",
        a.sessions);
}

void speculation_counters(std::string& out, const sched::Metrics& m) {
  counter(out, "baton_spec_drafted_tokens_total",
          "Tokens drafted by --speculate and checked in a step.", m.spec_drafted_tokens_total);
  counter(out, "baton_spec_accepted_tokens_total",
          "Drafted tokens the model confirmed (each saved a step).", m.spec_accepted_tokens_total);
  counter(out, "baton_spec_verify_rows_total",
          "Decode rows that carried drafts; tokens per verify = (accepted + these) / these.",
          m.spec_verify_rows_total);
  histogram(out, "baton_spec_request_acceptance_ratio",
            "Per request that drafted, at its end: the share of its drafted tokens confirmed.",
            m.spec_request_acceptance);
  histogram(out, "baton_spec_tokens_per_verify",
            "Per decode row that carried drafts: the tokens it produced (1 + drafts kept).",
            m.spec_tokens_per_verify);
}

void http_counters(std::string& out, const ServerCounters& s) {
  labelled(out, "baton_http_responses_total", "code", "counter", "HTTP responses by status code.",
           s.http_responses);
  gauge(out, "baton_http_open_connections", "Open client connections.", s.open_connections);
  counter(out, "baton_http_rejected_connections_total",
          "Connections refused over --max-connections.", s.rejected_connections);
  counter(out, "baton_http_evicted_connections_total",
          "Connections closed to make room under --max-connections.", s.evicted_connections);
  counter(out, "baton_http_timed_out_connections_total",
          "Connections closed past a header, body or idle deadline.", s.timed_out_connections);
}

void process_figures(std::string& out, const ProcessStats& p) {
  optional_scalar(out, "process_cpu_seconds_total", "counter",
                  "Total user and system CPU time spent in seconds.", p.cpu_seconds);
  optional_scalar(out, "process_open_fds", "gauge", "Number of open file descriptors.", p.open_fds);
  optional_scalar(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.",
                  p.max_fds);
  optional_scalar(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
                  p.virtual_memory_bytes);
  optional_scalar(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
                  p.resident_memory_bytes);
  optional_scalar(out, "process_start_time_seconds", "gauge",
                  "Start time of the process since unix epoch in seconds.", p.start_time_seconds);
}

}  // namespace

std::string render_metrics(const sched::Metrics& m, const ServerCounters& s,
                           const ProcessStats& p) {
  std::string out;
  latency_histograms(out, m);
  scheduler_gauges(out, m);
  kv_cache(out, m);
  kv_disk(out, m);
  work_counters(out, m);
  affinity_counters(out, m.affinity);
  speculation_counters(out, m);
  http_counters(out, s);
  process_figures(out, p);
  return out;
}

std::string render_metrics(const sched::Metrics& m, const ServerCounters& s) {
  return render_metrics(m, s, read_process_stats());
}

}  // namespace baton::server
