#pragma once
// A tiny OpenAI-compatible server for the bench tests: /v1/models, streaming /v1/completions
// and /v1/chat/completions with fake tokens. Prefill costs a configurable time per prompt word,
// each token a configurable delay; one-at-a-time mode serializes requests like --parallel 1.
#include <httplib.h>

#include <atomic>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace baton::bench::testing {

struct MockConfig {
  std::string model = "mock-model";
  int token_delay_us = 1000;
  int prefill_us_per_word = 5;
  bool one_at_a_time = false;    // requests run strictly one after another
  int http_error = 0;            // answer every generation request with this status
  bool keepalive_first = false;  // send an SSE comment before anything else
  bool no_stream = false;        // answer with one JSON body, ignoring "stream"
  int stall_ms = 0;              // stall this long before the first token (timeout tests)
  bool report_cached = true;     // usage.prompt_tokens_details.cached_tokens
};

class MockServer {
 public:
  explicit MockServer(MockConfig cfg = {});
  ~MockServer();
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<nlohmann::json> bodies() const;  // every generation request body, in arrival order
  // The session headers each generation request carried (name -> value), in arrival order.
  std::vector<std::map<std::string, std::string>> session_headers() const;

 private:
  void generate(const httplib::Request& req, httplib::Response& res, bool chat);
  long cached_prefix_words(const std::vector<std::string>& words);

  MockConfig cfg_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  std::mutex serial_;
  std::vector<nlohmann::json> bodies_;
  std::vector<std::map<std::string, std::string>> session_headers_;
  std::vector<std::vector<std::string>> seen_prompts_;
};

// A local port nothing listens on (bound, then released).
int closed_port();

}  // namespace baton::bench::testing
