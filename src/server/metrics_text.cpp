#include "server/metrics_text.h"

#include <fmt/format.h>

namespace baton::server {

namespace {

void header(std::string& out, const char* name, const char* type, const char* help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

void scalar(std::string& out, const char* name, const char* type, const char* help, double value) {
  header(out, name, type, help);
  out += fmt::format("{} {}\n", name, value);
}

std::string bound_label(double b) {
  return fmt::format("{}", b);
}

void histogram(std::string& out, const char* name, const char* help, const sched::Histogram& h) {
  header(out, name, "histogram", help);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < h.bounds.size(); ++i) {
    if (i < h.counts.size()) cumulative += h.counts[i];
    out += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, bound_label(h.bounds[i]), cumulative);
  }
  out += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n", name, h.count);
  out += fmt::format("{}_sum {}\n{}_count {}\n", name, h.sum, name, h.count);
}

template <typename Map>
void labelled(std::string& out, const char* name, const char* label, const char* help,
              const Map& values, const char* type = "counter") {
  header(out, name, type, help);
  for (const auto& [k, v] : values) out += fmt::format("{}{{{}=\"{}\"}} {}\n", name, label, k, v);
}

}  // namespace

std::string render_metrics(const sched::Metrics& m, const ServerCounters& s) {
  std::string out;
  histogram(out, "baton_time_to_first_token_seconds", "Time from arrival to the first token.",
            m.time_to_first_token);
  histogram(out, "baton_inter_token_latency_seconds", "Time between consecutive tokens.",
            m.inter_token_latency);
  histogram(out, "baton_request_queue_time_seconds", "Time a request waited before prefill.",
            m.queue_time);
  histogram(out, "baton_e2e_request_latency_seconds", "Time from arrival to the last token.",
            m.e2e_latency);
  scalar(out, "baton_requests_running", "gauge", "Requests prefilling or decoding.",
         static_cast<double>(m.requests_running));
  scalar(out, "baton_requests_waiting", "gauge", "Requests queued.",
         static_cast<double>(m.requests_waiting));
  scalar(out, "baton_kv_cache_usage_ratio", "gauge", "KV blocks held by live requests / pool.",
         m.kv_usage_ratio);
  scalar(out, "baton_max_decode_gap_seconds", "gauge", "Worst inter-token gap of any stream.",
         m.max_decode_gap_seconds);
  scalar(out, "baton_max_queue_wait_ms", "gauge", "Longest queue wait of any request.",
         m.max_queue_wait_ms);
  scalar(out, "baton_prompt_tokens_total", "counter", "Prompt tokens received.",
         static_cast<double>(m.prompt_tokens_total));
  scalar(out, "baton_generation_tokens_total", "counter", "Tokens generated.",
         static_cast<double>(m.generation_tokens_total));
  scalar(out, "baton_prefix_cache_queries_total", "counter", "Prefix cache lookups.",
         static_cast<double>(m.prefix_cache_queries_total));
  scalar(out, "baton_prefix_cache_hits_total", "counter", "Prefix cache lookups that reused KV.",
         static_cast<double>(m.prefix_cache_hits_total));
  labelled(out, "baton_requests_total", "status", "Finished requests by outcome.",
           m.requests_total);
  labelled(out, "baton_steps_total", "kind", "Engine steps by kind.", m.steps_total);
  labelled(out, "baton_max_step_seconds", "kind", "Longest engine step of each kind since start.",
           m.max_step_seconds, "gauge");
  labelled(out, "baton_http_responses_total", "code", "HTTP responses by status code.",
           s.http_responses);
  scalar(out, "baton_http_open_connections", "gauge", "Open client connections.",
         static_cast<double>(s.open_connections));
  scalar(out, "baton_http_rejected_connections_total", "counter",
         "Connections refused over --max-connections.",
         static_cast<double>(s.rejected_connections));
  return out;
}

}  // namespace baton::server
