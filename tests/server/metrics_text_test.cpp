// /metrics text: every family named with HELP and TYPE, histograms cumulative with +Inf equal
// to _count, buckets that resolve real latencies, and `promtool check metrics` finding nothing.
#include "server/ops/metrics_text.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace baton::server {
namespace {

// Non-trivial values everywhere, so empty families or zero-only lines hide nothing.
sched::Metrics busy_metrics() {
  sched::Metrics m;
  for (double s : {0.0005, 0.2, 3.0, 585.0}) m.time_to_first_token.observe(s);
  for (double s : {0.009, 0.127, 0.161, 0.161, 2.0}) m.inter_token_latency.observe(s);
  for (double s : {0.0, 0.04, 700.0}) m.queue_time.observe(s);
  for (double s : {1.5, 585.0, 5000.0}) m.e2e_latency.observe(s);
  m.draining = true;
  m.requests_running = 2;
  m.requests_waiting = 5;
  m.kv_usage_ratio = 0.25;
  m.max_decode_gap_seconds = 2.0;
  m.max_queue_wait_ms = 700000;
  m.prompt_tokens_total = 1234;
  m.generation_tokens_total = 567;
  m.prefix_cache_queries_total = 9;
  m.prefix_cache_hits_total = 4;
  m.prefix_cache_reused_tokens_total = 320;
  m.decode_rows_total = 560;
  m.prefill_tokens_total = 914;
  m.requests_total = {{"ok", 3}, {"cancelled", 1}, {"failed", 0}, {"rejected", 2}};
  m.kv_disk_enabled = true;
  m.kv_disk_bytes = 3 << 20;
  m.kv_disk_budget_bytes = 64 << 20;
  m.kv_disk_files = 2;
  m.kv_disk_blocks = 40;
  m.kv_disk_hits_total = 3;
  m.kv_disk_misses_total = 1;
  m.kv_disk_saves_total = 2;
  m.kv_disk_loads_total = 3;
  m.kv_disk_loaded_tokens_total = 480;
  m.kv_disk_evicted_files_total = 1;
  m.kv_disk_errors_total = {{"checksum", 1}};
  m.kv_disk_load_seconds.observe(0.03);
  m.kv_disk_save_seconds.observe(0.01);
  m.loading_requests = 1;
  m.step_io_wait_seconds = 0.002;
  m.steps_total = {{"decode", 40}, {"prefill", 3}, {"mixed", 7}};
  m.max_step_seconds = {{"decode", 0.15}, {"prefill", 1.25}, {"mixed", 0.4}};
  m.kv_blocks_total = 512;
  m.kv_blocks_used = 128;
  m.kv_blocks_cached = 64;
  m.kv_evictions_total = 11;
  m.state_checkpoint_slots = 16;
  m.state_checkpoints = 5;
  m.state_checkpoint_bytes = 5 << 20;
  m.state_checkpoints_taken_total = 9;
  m.state_restores_total = 2;
  m.state_checkpoint_evictions_total = 1;
  return m;
}

ServerCounters busy_counters() {
  ServerCounters s;
  s.http_responses = {{200, 42}, {400, 3}, {503, 1}};
  s.open_connections = 4;
  s.rejected_connections = 6;
  s.evicted_connections = 7;
  s.timed_out_connections = 8;
  return s;
}

ProcessStats pinned_process() {
  ProcessStats p;
  p.resident_memory_bytes = 123456789;
  p.virtual_memory_bytes = 987654321;
  p.open_fds = 17;
  p.max_fds = 1024;
  p.cpu_seconds = 12.5;
  p.start_time_seconds = 1700000000.25;
  return p;
}

std::string busy_text() {
  return render_metrics(busy_metrics(), busy_counters(), pinned_process());
}

// Sample lines as name{labels} -> value text.
std::map<std::string, std::string> samples(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    size_t sp = line.rfind(' ');
    out[line.substr(0, sp)] = line.substr(sp + 1);
  }
  return out;
}

// The _bucket lines of one histogram, in the order written, as (le, count).
std::vector<std::pair<std::string, uint64_t>> buckets(const std::string& text,
                                                      const std::string& name) {
  std::vector<std::pair<std::string, uint64_t>> out;
  const std::string prefix = name + "_bucket{le=\"";
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    size_t q = line.find('"', prefix.size());
    out.emplace_back(line.substr(prefix.size(), q - prefix.size()),
                     std::stoull(line.substr(line.rfind(' ') + 1)));
  }
  return out;
}

// The bucket an observation of `value` lands in: the first whose cumulative count rises.
std::string bucket_of(const sched::Histogram& empty, double value, const char* name) {
  sched::Histogram h = empty;
  h.observe(value);
  sched::Metrics m;
  m.inter_token_latency = h;
  for (const auto& [le, n] : buckets(render_metrics(m, {}, {}), name)) {
    if (n > 0) return le;
  }
  return "";
}

// Every family /metrics exports, with its type.
const std::map<std::string, std::string>& families() {
  static const std::map<std::string, std::string> all = {
      {"baton_time_to_first_token_seconds", "histogram"},
      {"baton_inter_token_latency_seconds", "histogram"},
      {"baton_request_queue_time_seconds", "histogram"},
      {"baton_e2e_request_latency_seconds", "histogram"},
      {"baton_step_duration_seconds", "histogram"},
      {"baton_draining", "gauge"},
      {"baton_requests_running", "gauge"},
      {"baton_requests_waiting", "gauge"},
      {"baton_parked_requests", "gauge"},
      {"baton_kv_preemptions_total", "counter"},
      {"baton_prefill_preemptions_total", "counter"},
      {"baton_prefill_resumes_total", "counter"},
      {"baton_max_decode_gap_seconds", "gauge"},
      {"baton_step_io_wait_seconds", "gauge"},
      {"baton_loading_requests", "gauge"},
      {"baton_kv_disk_bytes", "gauge"},
      {"baton_kv_disk_budget_bytes", "gauge"},
      {"baton_kv_disk_files", "gauge"},
      {"baton_kv_disk_blocks", "gauge"},
      {"baton_kv_disk_hits_total", "counter"},
      {"baton_kv_disk_misses_total", "counter"},
      {"baton_kv_disk_saves_total", "counter"},
      {"baton_kv_disk_loads_total", "counter"},
      {"baton_kv_disk_loaded_tokens_total", "counter"},
      {"baton_kv_disk_evicted_files_total", "counter"},
      {"baton_kv_disk_errors_total", "counter"},
      {"baton_kv_disk_load_seconds", "histogram"},
      {"baton_kv_disk_save_seconds", "histogram"},
      {"baton_max_queue_wait_seconds", "gauge"},
      {"baton_max_step_seconds", "gauge"},
      {"baton_kv_cache_usage_ratio", "gauge"},
      {"baton_kv_cache_capacity_blocks", "gauge"},
      {"baton_kv_cache_used_blocks", "gauge"},
      {"baton_kv_cache_cached_blocks", "gauge"},
      {"baton_kv_cache_evictions_total", "counter"},
      {"baton_prefix_cache_queries_total", "counter"},
      {"baton_prefix_cache_hits_total", "counter"},
      {"baton_prefix_cache_reused_tokens_total", "counter"},
      {"baton_state_checkpoint_capacity", "gauge"},
      {"baton_state_checkpoints", "gauge"},
      {"baton_state_checkpoint_bytes", "gauge"},
      {"baton_state_checkpoints_taken_total", "counter"},
      {"baton_state_restores_total", "counter"},
      {"baton_state_checkpoint_evictions_total", "counter"},
      {"baton_prompt_tokens_total", "counter"},
      {"baton_generation_tokens_total", "counter"},
      {"baton_prefill_tokens_total", "counter"},
      {"baton_decode_rows_total", "counter"},
      {"baton_requests_total", "counter"},
      {"baton_steps_total", "counter"},
      {"baton_kv_cache_config_info", "gauge"},
      {"baton_spec_drafted_tokens_total", "counter"},
      {"baton_spec_accepted_tokens_total", "counter"},
      {"baton_spec_verify_rows_total", "counter"},
      {"baton_spec_request_acceptance_ratio", "histogram"},
      {"baton_spec_tokens_per_verify", "histogram"},
      {"baton_session_requests_total", "counter"},
      {"baton_session_prompt_tokens_total", "counter"},
      {"baton_session_cached_tokens_total", "counter"},
      {"baton_sessions", "gauge"},
      {"baton_http_responses_total", "counter"},
      {"baton_http_open_connections", "gauge"},
      {"baton_http_rejected_connections_total", "counter"},
      {"baton_http_evicted_connections_total", "counter"},
      {"baton_http_timed_out_connections_total", "counter"},
      {"process_cpu_seconds_total", "counter"},
      {"process_open_fds", "gauge"},
      {"process_max_fds", "gauge"},
      {"process_virtual_memory_bytes", "gauge"},
      {"process_resident_memory_bytes", "gauge"},
      {"process_start_time_seconds", "gauge"},
  };
  return all;
}

// The state checkpoint families appear only for a hybrid model that takes checkpoints.
TEST(MetricsText, StateCheckpointFamiliesOnlyWithCheckpoints) {
  auto s = samples(busy_text());
  EXPECT_EQ(s["baton_state_checkpoint_bytes"], "5242880");
  EXPECT_EQ(s["baton_state_restores_total"], "2");
  sched::Metrics plain = busy_metrics();
  plain.state_checkpoint_slots = 0;
  const std::string text = render_metrics(plain, busy_counters(), pinned_process());
  EXPECT_EQ(text.find("baton_state_"), std::string::npos);
}

TEST(MetricsText, EveryFamilyHasHelpAndType) {
  const std::string text = busy_text();
  for (const auto& [name, type] : families()) {
    EXPECT_NE(text.find("# HELP " + name + " "), std::string::npos) << name;
    EXPECT_NE(text.find("# TYPE " + name + " " + type + "\n"), std::string::npos) << name;
  }
  // No family left over that this list (and README.md) does not name.
  size_t types = 0;
  for (size_t pos = 0; (pos = text.find("# TYPE ", pos)) != std::string::npos; ++pos) ++types;
  EXPECT_EQ(types, families().size());
  EXPECT_EQ(text.find("_ms"), std::string::npos) << "units are seconds";
}

// Operators read the list in README.md; it names every family, in backquotes.
TEST(MetricsText, ReadmeListsEveryFamily) {
  std::ifstream in(std::string(BATON_SOURCE_DIR) + "/README.md");
  ASSERT_TRUE(in) << "README.md not found";
  const std::string readme{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  for (const auto& [name, type] : families()) {
    bool listed = readme.find("`" + name + "`") != std::string::npos ||
                  readme.find("`" + name + "{") != std::string::npos;
    EXPECT_TRUE(listed) << name;
  }
  // ...and no family that is not exported.
  for (size_t pos = 0; (pos = readme.find("`baton_", pos)) != std::string::npos; ++pos) {
    size_t end = readme.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_", pos + 1);
    EXPECT_TRUE(families().count(readme.substr(pos + 1, end - pos - 1))) << readme.substr(pos, 40);
  }
}

TEST(MetricsText, ValuesReachTheirLines) {
  auto s = samples(busy_text());
  EXPECT_EQ(s["baton_max_queue_wait_seconds"], "700");
  EXPECT_EQ(s["baton_kv_disk_errors_total{kind=\"checksum\"}"], "1");
  EXPECT_EQ(s["baton_kv_disk_errors_total{kind=\"io\"}"], "0");
  EXPECT_EQ(s["baton_kv_disk_loaded_tokens_total"], "480");
  EXPECT_EQ(s["baton_kv_cache_evictions_total"], "11");
  EXPECT_EQ(s["baton_decode_rows_total"], "560");
  EXPECT_EQ(s["baton_prefill_tokens_total"], "914");
  EXPECT_EQ(s["baton_prefix_cache_reused_tokens_total"], "320");
  EXPECT_EQ(s["baton_kv_cache_capacity_blocks"], "512");
  EXPECT_EQ(s["baton_requests_total{status=\"rejected\"}"], "2");
  EXPECT_EQ(s["baton_steps_total{kind=\"mixed\"}"], "7");
  EXPECT_EQ(s["baton_max_step_seconds{kind=\"prefill\"}"], "1.25");
  EXPECT_EQ(s["baton_http_responses_total{code=\"503\"}"], "1");
  EXPECT_EQ(s["baton_http_evicted_connections_total"], "7");
  EXPECT_EQ(s["baton_http_timed_out_connections_total"], "8");
  EXPECT_EQ(s["process_resident_memory_bytes"], "123456789");
  EXPECT_EQ(s["process_start_time_seconds"], "1700000000.25");
}

TEST(MetricsText, HistogramsAreCumulativeAndEndAtCount) {
  const std::string text = busy_text();
  auto s = samples(text);
  for (const char* name : {"baton_time_to_first_token_seconds", "baton_inter_token_latency_seconds",
                           "baton_request_queue_time_seconds", "baton_e2e_request_latency_seconds",
                           "baton_step_duration_seconds"}) {
    auto b = buckets(text, name);
    ASSERT_GE(b.size(), 2u) << name;
    EXPECT_EQ(b.back().first, "+Inf") << name;
    EXPECT_EQ(std::to_string(b.back().second), s[std::string(name) + "_count"]) << name;
    for (size_t i = 1; i < b.size(); ++i) {
      EXPECT_GE(b[i].second, b[i - 1].second) << name << " le=" << b[i].first;
      if (i + 1 < b.size()) {
        EXPECT_LT(std::stod(b[i - 1].first), std::stod(b[i].first)) << name;
      }
    }
  }
}

TEST(MetricsText, InterTokenBucketsResolveCpuDecodeGaps) {
  const auto h = sched::Histogram::inter_token_seconds();
  const char* name = "baton_inter_token_latency_seconds";
  // Medians seen on CPU runs; they used to share one bucket.
  EXPECT_NE(bucket_of(h, 0.127, name), bucket_of(h, 0.161, name));
  EXPECT_NE(bucket_of(h, 0.161, name), bucket_of(h, 0.19, name));
  EXPECT_EQ(bucket_of(h, 0.005, name), "0.005");  // bounds are inclusive
  EXPECT_EQ(h.bounds.front(), 0.005);
}

TEST(MetricsText, RequestBucketsReachAnHour) {
  auto h = sched::Histogram::request_seconds();
  EXPECT_EQ(h.bounds.back(), 3600);
  h.observe(585);
  size_t i = 0;
  while (h.counts[i] == 0) ++i;
  ASSERT_LT(i, h.bounds.size()) << "a 585 s request must land in a finite bucket";
  EXPECT_EQ(h.bounds[i], 600);
}

TEST(MetricsText, UnreadableProcessFiguresAreLeftOut) {
  std::string text = render_metrics(busy_metrics(), busy_counters(), ProcessStats{});
  EXPECT_EQ(text.find("process_"), std::string::npos);
}

#ifdef __linux__
TEST(MetricsText, ReadsProcessFiguresFromProc) {
  ProcessStats p = read_process_stats();
  ASSERT_TRUE(p.resident_memory_bytes && p.open_fds && p.start_time_seconds && p.cpu_seconds);
  EXPECT_GT(*p.resident_memory_bytes, 1u << 20);
  EXPECT_GE(*p.open_fds, 3u);
  EXPECT_GT(*p.start_time_seconds, 1.5e9);
  EXPECT_NE(render_metrics({}, {}).find("\nprocess_resident_memory_bytes "), std::string::npos);
}
#endif

// promtool exits non-zero on a parse error and prints one line per lint problem.
TEST(MetricsText, PromtoolFindsNoProblems) {
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "promtool not found: install the Debian 'prometheus' package "
                    "(scripts/install-deps.sh does)";
  }
  auto path = std::filesystem::temp_directory_path() /
              ("baton-metrics-" + std::to_string(::getpid()) + ".txt");
  std::ofstream(path) << render_metrics(busy_metrics(), busy_counters());
  std::string cmd = "promtool check metrics < '" + path.string() + "' 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string report;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) report.append(buf, n);
  int status = ::pclose(p);
  std::filesystem::remove(path);
  EXPECT_EQ(status, 0) << report;
  EXPECT_EQ(report, "");
}

}  // namespace
}  // namespace baton::server
