#pragma once
// The OpenAI-compatible HTTP front end. Handlers never run the model: they parse and validate,
// tokenize, submit to the scheduler (Backend), then read the request's events and write them out
// (JSON or SSE). The server listens before the model is loaded (GET /health answers 503 until
// attach()).
//
// Auth: with an API key set, every route except GET /health needs "Authorization: Bearer KEY"
// (or "x-api-key: KEY"); /metrics and /status are protected too because they expose request
// details.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "server/backend.h"
#include "server/metrics_text.h"
#include "server/text_codec.h"

namespace baton::server {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;           // 0: any free port (tests)
  std::string api_key;       // empty: no auth
  std::string model_id;      // what /v1/models lists and requests may name
  double keepalive_s = 5;    // SSE ": keepalive" comment period while nothing else is sent
  int64_t max_body_mb = 8;   // larger bodies get 413
  int max_connections = 64;  // concurrent connections; more get 503
  int32_t max_tokens_limit = 4096;
  int read_timeout_s = 30;  // a client that stalls sending its request is dropped
  int write_timeout_s = 30;
};

struct ServeContext;  // what handlers see once the model is attached (server_routes.h)

class HttpServer {
 public:
  explicit HttpServer(ServerOptions opts);
  ~HttpServer();  // stops
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and serves on a background thread; returns the port. Throws std::runtime_error when
  // the address cannot be bound.
  int start();
  // Starts serving the model. Backend and codec must outlive the server (or stop()).
  void attach(Backend& backend, const TextCodec& codec);
  // Stops listening and joins the listener; streams still open are cut. Idempotent.
  void stop();
  int port() const { return port_; }
  ServerCounters counters() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace baton::server
