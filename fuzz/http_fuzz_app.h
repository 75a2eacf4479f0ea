#pragma once
// The server's request path without sockets or an engine, for fuzz_http and the corpus replay
// test (tests/server/http_pipeline_corpus_test.cpp): run_request_pipeline (src/server/
// request_pipeline.h) over an application that dispatches like HttpServer and runs its real
// route handlers on a one-byte-per-token codec and a backend whose queue is always full. So
// every request is parsed, routed, authenticated, validated and tokenized exactly as served,
// and the first thing that would reach the engine is refused with 503 instead. No threads.
#include <fmt/format.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/backend.h"
#include "server/errors.h"
#include "server/request_pipeline.h"
#include "server/server_routes.h"
#include "server/text_codec.h"

namespace baton::server::fuzzing {

inline constexpr const char* kFuzzApiKey = "fuzz-key";
inline constexpr const char* kFuzzModel = "fuzz-model";
inline constexpr int32_t kFuzzCtx = 4096;

// One token per byte in and the byte itself out, so decoded text can be invalid UTF-8.
class ByteCodec : public TextCodec {
 public:
  std::vector<int32_t> encode(const std::string& text, bool add_bos, bool) const override {
    std::vector<int32_t> out;
    if (add_bos) out.push_back(1);
    for (unsigned char c : text) out.push_back(c);
    return out;
  }
  std::string decode(const std::vector<int32_t>& tokens) const override {
    std::string s;
    for (int32_t t : tokens) s += piece(t);
    return s;
  }
  std::unique_ptr<TextStream> stream(const std::vector<int32_t>&) const override {
    struct S : TextStream {
      std::string push(int32_t t) override { return std::string(1, static_cast<char>(t)); }
      std::string flush() override { return ""; }
    };
    return std::make_unique<S>();
  }
  std::string piece(int32_t t) const override { return std::string(1, static_cast<char>(t)); }
  bool has_token(const std::string& text) const override { return text == "<|im_start|>"; }
  int32_t n_vocab() const override { return 256; }
  bool default_add_bos() const override { return true; }
  size_t max_token_bytes() const override { return 1; }
};

// The engine loop's front door, always full: a request that passed every check gets the 503
// that `--max-queue` gives, so no generation (and no thread) ever starts.
class QueueFullBackend : public Backend {
 public:
  QueueFullBackend() { cfg_.ctx = kFuzzCtx; }
  std::shared_ptr<sched::RequestHandle> submit(sched::GenerateRequest) override {
    throw sched::SubmitError(sched::SubmitError::Code::QueueFull, "fuzzing: nothing runs");
  }
  sched::StatusSnapshot status() const override { return {}; }
  sched::Metrics metrics() const override { return {}; }
  const sched::SchedConfig& config() const override { return cfg_; }

 private:
  sched::SchedConfig cfg_;
};

// Dispatches like HttpServer::Impl::dispatch (src/server/http_server.cpp), whose route table is
// private to that file: keep the two in step, or replace this with the server's own HttpApp
// once HttpServer exposes it.
class FuzzApp : public HttpApp {
 public:
  FuzzApp()
      : ctx_{opts_,
             backend_,
             codec_,
             ChatStyle::ChatML,
             kFuzzCtx,
             0,
             [] {
                     return ServerCounters{}; }} {
    opts_.api_key = kFuzzApiKey;
    opts_.model_id = kFuzzModel;
    opts_.max_tokens_limit = kFuzzCtx;
  }

  Dispatch dispatch(const RequestHead& head) override {
    std::string_view path = target_path(head.target());
    std::string_view method = head.method_string();
    bool is_health = path == "/health" || path == "/v1/health";
    Dispatch d;
    if (is_health && method == "GET") {
      d.handle = [](const HttpRequest&) {
        HttpResponse res;
        res.body = R"({"status":"ok"})";
        return res;
      };
      return d;
    }
    auto route = is_health ? std::optional<Route>(Route{"GET", nullptr, false}) : find(path);
    if (!route) {
      d.early = response_for(
          ApiError(404, fmt::format("no route {} {}", method, path), "", "", "not_found"));
    } else if (method != route->method) {
      d.early = response_for(ApiError(405, fmt::format("{} does not accept {}", path, method), "",
                                      "invalid_request_error", "method_not_allowed"));
      d.early->set_header("Allow", route->method);
    } else if (!api_key_matches(head, opts_.api_key)) {
      d.early = response_for(ApiError(401, "missing or wrong API key", "", "", "invalid_api_key"));
    } else {
      d.heavy = route->heavy;
      d.handle = [this, fn = route->fn](const HttpRequest& req) { return run(fn, req); };
    }
    return d;
  }
  void on_response(int) override {}
  HttpResponse error_response(const ApiError& e) override { return response_for(e); }

 private:
  using RouteFn = void (*)(const ServeContext&, const HttpRequest&, HttpResponse&);
  struct Route {
    const char* method;
    RouteFn fn;
    bool heavy;
  };

  static std::optional<Route> find(std::string_view path) {
    static const std::map<std::string, Route, std::less<>> routes = {
        {"/v1/models", {"GET", handle_models, false}},
        {"/models", {"GET", handle_models, false}},
        {"/metrics", {"GET", handle_metrics, false}},
        {"/status", {"GET", handle_status, false}},
        {"/v1/chat/completions", {"POST", handle_chat, true}},
        {"/chat/completions", {"POST", handle_chat, true}},
        {"/v1/completions", {"POST", handle_completion, true}},
        {"/completions", {"POST", handle_completion, true}},
        {"/tokenize", {"POST", handle_tokenize, true}},
        {"/detokenize", {"POST", handle_detokenize, true}}};
    auto it = routes.find(path);
    if (it != routes.end()) return it->second;
    for (std::string_view prefix : {"/v1/models/", "/models/"}) {
      if (path.size() > prefix.size() && path.substr(0, prefix.size()) == prefix) {
        return Route{"GET", handle_model, false};
      }
    }
    return std::nullopt;
  }

  static HttpResponse response_for(const ApiError& e) {
    HttpResponse res;
    send_error(res, e);
    return res;
  }

  // As HttpServer's wrap(): ApiError is the answer; anything else is an internal error (500),
  // which check_response reports, since no client input should cause one.
  HttpResponse run(RouteFn fn, const HttpRequest& req) const {
    HttpResponse res;
    try {
      fn(ctx_, req, res);
    } catch (const ApiError& e) {
      return response_for(e);
    } catch (const std::exception& e) {
      return response_for(ApiError(500, std::string("internal error: ") + e.what()));
    }
    return res;
  }

  ServerOptions opts_;
  ByteCodec codec_;
  QueueFullBackend backend_;
  ServeContext ctx_;
};

// The server's limits as `baton serve` sets them by default.
inline HeadLimits fuzz_limits() {
  HeadLimits l;
  l.max_body_bytes = static_cast<uint64_t>(ServerOptions{}.max_body_mb) << 20;
  return l;
}

// What every answer must satisfy whatever the bytes were; empty when it does, else why not.
// No 500 (an exception a handler did not turn into an ApiError), every error a JSON
// {"error": {message, type, param, code}} body, every JSON answer valid JSON.
inline std::string check_response(const PipelineResponse& r) {
  if (r.async) return r.status == 200 || r.status == 0 ? "" : "async answer with a status";
  if (r.status < 200 || r.status > 599) return fmt::format("status {}", r.status);
  if (r.status == 500) return "500: " + r.body;
  if (r.content_type != "application/json") return "";  // /metrics: Prometheus text
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_discarded()) return fmt::format("{} body is not JSON: {}", r.status, r.body);
  if (r.status < 400) return "";
  if (!j.is_object() || !j.contains("error") || !j["error"].is_object()) {
    return fmt::format("{} body has no error object: {}", r.status, r.body);
  }
  const auto& e = j["error"];
  if (!e.contains("message") || !e["message"].is_string() || !e.contains("type") ||
      !e["type"].is_string() || !e.contains("param") || !e.contains("code")) {
    return fmt::format("{} error object lacks message/type/param/code: {}", r.status, r.body);
  }
  return "";
}

}  // namespace baton::server::fuzzing
