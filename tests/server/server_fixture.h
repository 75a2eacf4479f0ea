#pragma once
// An in-process `baton serve`: FakeEngine + EngineLoop + HttpServer on a free loopback port,
// with a tiny deterministic text codec (one token per byte on the way in, one printable
// character per token on the way out).
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "sched/engine_loop.h"
#include "server/answer/backend.h"
#include "server/http_server.h"
#include "support/fake_engine.h"
#include "tokenizer/text_codec.h"

namespace baton::server::testing {

// Token t prints as the character ' ' + t % 95, so any token sequence has a known text.
inline char fake_char(int32_t t) {
  return static_cast<char>(' ' + t % 95);
}

class FakeCodec : public tokenizer::TextCodec {
 public:
  explicit FakeCodec(int32_t n_vocab = 256, bool chatml = false)
      : n_vocab_(n_vocab), chatml_(chatml) {}
  std::vector<int32_t> encode(const std::string& text, bool, bool) const override {
    std::vector<int32_t> out;
    for (unsigned char c : text) out.push_back(c % n_vocab_);
    return out;
  }
  std::vector<int32_t> encode_rendered(
      const std::string& text, bool add_bos,
      const std::vector<std::pair<size_t, size_t>>&) const override {
    return encode(text, add_bos, true);
  }
  std::vector<std::string> control_texts() const override {
    if (!chatml_) return {};
    return {"<|im_start|>", "<|im_end|>"};
  }
  std::string bos_text() const override { return ""; }
  std::string eos_text() const override { return ""; }
  std::string decode(const std::vector<int32_t>& tokens) const override {
    std::string s;
    for (int32_t t : tokens) s += fake_char(t);
    return s;
  }
  std::unique_ptr<tokenizer::TextStream> stream(const std::vector<int32_t>&, bool) const override {
    struct S : tokenizer::TextStream {
      std::string push(int32_t t) override { return std::string(1, fake_char(t)); }
      std::string flush() override { return ""; }
    };
    return std::make_unique<S>();
  }
  std::string piece(int32_t t) const override { return std::string(1, fake_char(t)); }
  bool has_token(const std::string& text) const override {
    return chatml_ && text == "<|im_start|>";
  }
  int32_t n_vocab() const override { return n_vocab_; }
  // The fake engine's end token (FakeEngineConfig::eog_id): a constraint allows it only where
  // the output may end, and spells '"' with another id.
  std::vector<int32_t> eog_tokens() const override { return {engine::FakeEngineConfig{}.eog_id}; }
  bool default_add_bos() const override { return false; }
  size_t max_token_bytes() const override { return 1; }  // one byte per token

 private:
  int32_t n_vocab_;
  bool chatml_;
};

struct FixtureOptions {
  sched::SchedConfig sched;
  engine::FakeEngineConfig engine;
  ServerOptions server;
  bool attach = true;
  bool chatml = false;  // the fake vocabulary has <|im_start|>
};

class ServerHarness {
 public:
  explicit ServerHarness(FixtureOptions o = {})
      : opts_(std::move(o)), codec_(opts_.engine.n_vocab, opts_.chatml) {
    opts_.server.port = 0;
    if (opts_.server.model_id.empty()) opts_.server.model_id = "fake-model";
    engine_ = std::make_unique<engine::FakeEngine>(opts_.engine);
    loop_ = std::make_unique<sched::EngineLoop>(*engine_, opts_.sched);
    loop_->start();
    backend_ = std::make_unique<EngineLoopBackend>(*loop_);
    http_ = std::make_unique<HttpServer>(opts_.server);
    port_ = http_->start();
    if (opts_.attach) attach();
  }
  ~ServerHarness() {
    loop_->shutdown();
    http_->stop();
  }
  void attach() { http_->attach(*backend_, codec_); }

  int port() const { return port_; }
  std::unique_ptr<httplib::Client> client(int timeout_s = 30) const {
    auto c = std::make_unique<httplib::Client>("127.0.0.1", port_);
    c->set_read_timeout(timeout_s, 0);
    c->set_write_timeout(timeout_s, 0);
    return c;
  }
  engine::FakeEngine& engine() { return *engine_; }
  sched::EngineLoop& loop() { return *loop_; }
  HttpServer& http() { return *http_; }
  const FakeCodec& codec() const { return codec_; }

  // Text a greedy request gets from the fake model for this prompt text.
  std::string expected_text(const std::string& prompt, int n, bool ignore_eos = false) const {
    auto ref = engine_->reference(codec_.encode(prompt, false, false), n, ignore_eos);
    std::vector<int32_t> visible;
    for (int32_t t : ref) {
      if (!ignore_eos && t == opts_.engine.eog_id) break;
      visible.push_back(t);
    }
    return codec_.decode(visible);
  }

  // Waits until /status shows no running or waiting request and no KV block in use.
  bool wait_idle(int timeout_ms = 5000) const {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (std::chrono::steady_clock::now() < deadline) {
      auto s = loop_->status();
      if (s.requests.empty() && s.metrics.kv_blocks_used == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

 private:
  FixtureOptions opts_;
  FakeCodec codec_;
  std::unique_ptr<engine::FakeEngine> engine_;
  std::unique_ptr<sched::EngineLoop> loop_;
  std::unique_ptr<EngineLoopBackend> backend_;
  std::unique_ptr<HttpServer> http_;
  int port_ = 0;
};

inline nlohmann::json parse(const std::string& s) {
  return nlohmann::json::parse(s, nullptr, false);
}

// The error body shape every failure must have.
inline void expect_error_shape(const std::string& body, const std::string& context) {
  auto j = parse(body);
  ASSERT_TRUE(j.is_object()) << context << ": body is not JSON: " << body;
  ASSERT_TRUE(j.contains("error")) << context << ": " << body;
  const auto& e = j["error"];
  EXPECT_TRUE(e["message"].is_string() && !e["message"].get<std::string>().empty()) << context;
  EXPECT_TRUE(e["type"].is_string()) << context;
  EXPECT_TRUE(e.contains("param")) << context;
  EXPECT_TRUE(e.contains("code")) << context;
}

inline constexpr const char* kChat = "/v1/chat/completions";
inline constexpr const char* kText = "/v1/completions";

// POSTs `body` as JSON.
inline httplib::Result post(httplib::Client& c, const std::string& path, const nlohmann::json& body,
                            const httplib::Headers& headers = {}) {
  return c.Post(path.c_str(), headers, body.dump(), "application/json");
}

// What the default transcript template renders for one user turn (the fake vocabulary has no
// <|im_start|>), with an optional system prompt.
inline std::string plain_prompt(const std::string& user, const std::string& system = "") {
  std::string p = system.empty() ? "" : "System: " + system + "\n";
  return p + "User: " + user + "\nAssistant:";
}

}  // namespace baton::server::testing
