#pragma once
// The server's request path without sockets or an engine, for fuzz_http and the corpus replay
// test (tests/server/http_pipeline_corpus_test.cpp): run_request_pipeline (src/server/
// request_pipeline.h) over HttpServer's own application (HttpServer::app()), attached to a
// one-byte-per-token codec and a backend whose queue is always full. So every request is
// parsed, routed, authenticated, validated and tokenized exactly as served, and the first thing
// that would reach the engine is refused with 503 instead. The server is never started: no
// sockets, no threads.
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/answer/backend.h"
#include "server/http/http_transport.h"
#include "server/http/request_pipeline.h"
#include "server/http_server.h"
#include "tokenizer/text_codec.h"

namespace baton::server::fuzzing {

inline constexpr const char* kFuzzApiKey = "fuzz-key";
inline constexpr const char* kFuzzModel = "fuzz-model";
inline constexpr int32_t kFuzzCtx = 4096;

// One token per byte in and the byte itself out, so decoded text can be invalid UTF-8.
class ByteCodec : public tokenizer::TextCodec {
 public:
  std::vector<int32_t> encode(const std::string& text, bool add_bos, bool) const override {
    std::vector<int32_t> out;
    if (add_bos) out.push_back(1);
    for (unsigned char c : text) out.push_back(c);
    return out;
  }
  std::vector<int32_t> encode_rendered(
      const std::string& text, bool add_bos,
      const std::vector<std::pair<size_t, size_t>>&) const override {
    return encode(text, add_bos, true);
  }
  std::vector<std::string> control_texts() const override {
    if (!true) return {};
    return {"<|im_start|>", "<|im_end|>"};
  }
  std::string bos_text() const override { return ""; }
  std::string eos_text() const override { return ""; }
  std::string decode(const std::vector<int32_t>& tokens) const override {
    std::string s;
    for (int32_t t : tokens) s += piece(t);
    return s;
  }
  std::unique_ptr<tokenizer::TextStream> stream(const std::vector<int32_t>&, bool) const override {
    struct S : tokenizer::TextStream {
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
  bool draining() const override { return false; }

 private:
  sched::SchedConfig cfg_;
};

// HttpServer's own application (its dispatch, route table, auth and handlers) on the two
// stand-ins above. The server is never started, so no socket is opened and no thread runs.
class FuzzApp {
 public:
  FuzzApp() : server_(options()) { server_.attach(backend_, codec_); }

  HttpApp& app() { return server_.app(); }

 private:
  static ServerOptions options() {
    ServerOptions o;
    o.api_key = kFuzzApiKey;
    o.model_id = kFuzzModel;
    return o;
  }

  ByteCodec codec_;
  QueueFullBackend backend_;
  HttpServer server_;  // last: destroyed before the codec and backend it holds
};

// The server's limits as `baton serve` sets them by default.
inline HeadLimits fuzz_limits() {
  HeadLimits l;
  l.max_body_bytes = static_cast<uint64_t>(ServerOptions{}.max_body_mb) << 20;
  return l;
}

// What every answer must satisfy whatever the bytes were; empty when it does, else why not.
// No 500 (an exception a handler did not turn into an ApiError), every error a JSON
// {"error": {message, type, param, code}} body (Anthropic's routes: {"type": "error", "error":
// {type, message}}), every JSON answer valid JSON.
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
  // Anthropic's routes answer {"type": "error", "error": {type, message}}.
  const bool anthropic = j.value("type", "") == "error";
  if (!e.contains("message") || !e["message"].is_string() || !e.contains("type") ||
      !e["type"].is_string() || (!anthropic && (!e.contains("param") || !e.contains("code")))) {
    return fmt::format("{} error object lacks message/type/param/code: {}", r.status, r.body);
  }
  return "";
}

}  // namespace baton::server::fuzzing
