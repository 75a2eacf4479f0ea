#pragma once
// The OpenAI-compatible HTTP front end. Handlers never run the model: they parse and validate,
// tokenize, submit to the scheduler (Backend), and hand the transport an AsyncBody that turns
// the request's events into JSON or SSE. The server listens before the model is loaded (GET
// /health answers 503 until attach()).
//
// Auth: with an API key set, every route except GET /health needs "Authorization: Bearer KEY"
// (or "x-api-key: KEY", or Basic credentials with the key as password, which is how a browser
// opening /dashboard sends it), checked from the head before any body byte is read; /metrics,
// /status, /dashboard and /events are protected too because they expose request details.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "server/answer/backend.h"
#include "server/ops/metrics_text.h"
#include "tokenizer/text_codec.h"

namespace baton::server {

// How chat requests become prompts and how the model's answer is read back (docs: README "Chat
// templates, tools and reasoning").
struct ChatOptions {
  std::string template_text;     // --chat-template FILE's text; empty: the model's own template
  std::string template_kwargs;   // --chat-template-kwargs: a JSON object of extra variables
  std::string tool_call_format;  // --tool-call-format; empty: detected from the template
  bool reasoning = true;         // --reasoning-format: auto (true) or none (thinking stays inline)
};

// The chat templates a GGUF carries: tokenizer.chat_template and its "tool_use" variant
// (tokenizer.chat_template.tool_use), used for requests with tools when present.
struct ModelTemplates {
  ModelTemplates() = default;
  ModelTemplates(std::string chat_template) : chat(std::move(chat_template)) {}  // NOLINT
  ModelTemplates(const char* chat_template) : chat(chat_template) {}             // NOLINT
  std::string chat;
  std::string tool_use;
};

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;          // 0: any free port (tests)
  std::string api_key;      // empty: no auth
  std::string model_id;     // what /v1/models lists and requests may name
  double keepalive_s = 5;   // SSE ": keepalive" comment period while nothing else is sent
  int64_t max_body_mb = 8;  // larger bodies get 413
  // Open connections. Past it, the connection that has waited longest for (or in) its request
  // head is closed to make room; when every one is busy with a request, 503.
  int max_connections = 1024;
  // Only a connection that has waited this long (idle or in its head) is closed to make room; a
  // younger one is a client about to send its request. Not a flag: tests shorten or stretch it.
  double evict_min_age_s = 0.25;
  int32_t max_tokens_limit = 0;   // set by attach()
  double header_timeout_s = 10;   // a request head must arrive within this from its first byte
  double body_timeout_s = 30;     // and its body within this after the head
  double idle_timeout_s = 5;      // keep-alive connections wait this long for a next request
  int64_t send_stall_ms = 30000;  // a write that makes no progress for this long drops the client
  int http_threads = 2;           // I/O threads (all connections are asynchronous)
  int handler_threads = 2;        // threads that parse and tokenize request bodies
  ChatOptions chat;
};

struct ServeContext;  // what handlers see once the model is attached (server_routes.h)
class HttpApp;        // what the transport drives (http_transport.h)

class HttpServer {
 public:
  explicit HttpServer(ServerOptions opts);
  ~HttpServer();  // stops
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and serves on background threads; returns the port. Throws std::runtime_error when
  // the address cannot be bound.
  int start();
  // Starts serving the model. Backend and codec must outlive the server (or stop()).
  // `max_tokens_limit` 0: the backend's context. `model_templates`: the GGUF's chat templates
  // (empty when it has none). Throws std::runtime_error when the chat template (the model's or
  // --chat-template's) does not compile or the chat options are invalid.
  void attach(Backend& backend, const tokenizer::TextCodec& codec, int32_t max_tokens_limit = 0,
              const ModelTemplates& model_templates = {});
  // Stops listening, lets responses in progress finish for up to `drain` (their requests should
  // already be finished or cancelled, as after EngineLoop::shutdown), then closes everything.
  // Idempotent.
  void stop(std::chrono::milliseconds drain = std::chrono::milliseconds(1000));
  int port() const { return port_; }
  ServerCounters counters() const;
  // The application the transport drives; lets the fuzzer and tests run dispatch and the
  // handlers without sockets (run_request_pipeline, request_pipeline.h).
  HttpApp& app();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace baton::server
