#pragma once
// A streaming client for OpenAI-compatible servers (baton, llama-server, vLLM): one blocking
// request per calling thread, recording when every piece of the response arrived.
#include <atomic>
#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/record.h"

namespace baton::bench {

using Clock = std::chrono::steady_clock;

// A failure that ends the whole bench (unreachable server, unusable answer, bad option).
struct BenchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Endpoint {
  std::string url;        // as the user wrote it, for messages
  std::string host_port;  // scheme://host:port, what httplib connects to
  std::string base_path;  // path prefix before /v1 ("" for most servers)
  std::string api_key;
  double connect_timeout_s = 10;
};

// Accepts http://host:port, http://host:port/prefix and .../v1; throws BenchError naming the
// problem when the URL cannot work.
Endpoint parse_endpoint(const std::string& url, const std::string& api_key = "");

struct StreamRequest {
  std::string label;
  std::string model;
  bool chat = false;
  std::string prompt;       // /v1/completions
  nlohmann::json messages;  // /v1/chat/completions
  long max_tokens = 16;
  long prompt_tokens_requested = 0;
  double timeout_s = 600;
  std::vector<std::pair<std::string, std::string>> headers;  // extra: the session's id, ...
};

// What a scenario thread may watch while the request streams on another thread.
struct Progress {
  std::atomic<double> send_ms{-1};  // set just before the request goes out
  std::atomic<long> tokens{0};
  std::atomic<bool> finished{false};
};

// Sends one streaming request and returns its record (never throws for server/network
// failures: they land in record.errors). Gives up at min(send + timeout_s, deadline).
RequestRecord stream_request(const Endpoint& ep, const StreamRequest& req, Clock::time_point t0,
                             Clock::time_point deadline, Progress* progress = nullptr);

// The JSON body stream_request sends (exposed for tests).
nlohmann::json request_body(const StreamRequest& req);

// Applies one SSE data payload to the record: token text, usage, errors. Returns true when the
// payload carried non-empty text (a token).
bool apply_event(const std::string& data, bool chat, RequestRecord& rec);

// First model id listed by GET /v1/models; throws BenchError with the URL and reason.
std::string first_model_id(const Endpoint& ep, double timeout_s);

// The value of one Prometheus sample (e.g. `baton_max_step_seconds{kind="mixed"}`) from the
// server's /metrics, or nullopt when the server has no such endpoint or sample (llama-server,
// vLLM): figures that need it are then left out, never guessed.
std::optional<double> metric_sample(const Endpoint& ep, const std::string& sample,
                                    double timeout_s);

// The server's whole /metrics text, or nullopt when it has none; find_sample reads one sample
// of it (the whole line's name and labels, e.g. `process_open_fds`).
std::optional<std::string> fetch_metrics(const Endpoint& ep, double timeout_s);
std::optional<double> find_sample(const std::string& body, const std::string& sample);

// Latencies of `n` GET /health sent one after another on one keep-alive connection; a probe
// that fails is left out, so fewer than `n` values means some failed.
// Reads baton's live-view stream (GET /events) until `stop` is set, as an open /dashboard does;
// returns the bytes read, or nothing when the server has no such stream.
std::optional<uint64_t> read_live_events(const Endpoint& ep, const std::atomic<bool>& stop);

std::vector<double> health_latencies_ms(const Endpoint& ep, long n, double timeout_s);

double ms_since(Clock::time_point t0);

}  // namespace baton::bench
