// Every scenario, scaled down, against the real `baton serve` on the shared stories260K model.
// Skips when the model is not on this machine; fails when the binary cannot serve.
#include <gtest/gtest.h>
#include <httplib.h>

#include <cmath>
#include <memory>
#include <thread>

#include "bench/mock_server.h"
#include "bench/scenarios.h"
#include "bench/serve_process.h"
#include "support/shared_files.h"

namespace baton::bench {
namespace {

class RealServer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto model = baton::testing::shared_file("models/stories260K.gguf");
    if (model.empty()) {
      skip_reason_ =
          std::string("needs ../shared/models/stories260K.gguf (set BATON_SHARED_DIR to run)");
      return;
    }
    // A binary that cannot print `serve --help` is broken, not absent: every test fails.
    if (std::system(
            ("'" + baton::testing::baton_binary() + "' serve --help >/dev/null 2>&1").c_str()) !=
        0) {
      start_error_ = "`" + baton::testing::baton_binary() + " serve --help` failed";
      return;
    }
    server_ = std::make_unique<testing::ServeProcess>();
    start_error_ = server_->start(model.string(), {"--parallel", "4"}, 30);
  }

  static void TearDownTestSuite() { server_.reset(); }

  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    ASSERT_TRUE(start_error_.empty()) << start_error_;
  }

  ScenarioResult run(const std::string& name, std::map<std::string, double> knobs) {
    ScenarioOptions opt;
    opt.model = "stories260K";
    opt.prompt_unit = 0.5;  // a 512-token vocabulary spends about two tokens per word
    opt.timeout_s = 60;
    opt.knobs = std::move(knobs);
    auto ep = parse_endpoint(server_->url());
    auto r = run_scenario(name, ep, opt, Clock::now() + std::chrono::seconds(120));
    for (const auto& q : r.requests) {
      EXPECT_TRUE(q.ok()) << q.label << ": " << (q.ok() ? "" : q.errors.front());
      EXPECT_FALSE(q.token_ms.empty()) << q.label;
      // ignore_eos is honored: the server generates exactly max_tokens.
      EXPECT_EQ(q.usage.completion_tokens.value_or(-1), q.max_tokens) << q.label;
      EXPECT_GT(q.usage.prompt_tokens.value_or(0), 0) << q.label;
    }
    return r;
  }

  static bool measured(const ScenarioResult& r, const std::string& name) {
    for (const auto& f : r.figures) {
      if (f.name == name) return !std::isnan(f.value);
    }
    return false;
  }

  static inline std::string skip_reason_, start_error_;
  static inline std::unique_ptr<testing::ServeProcess> server_;
};

TEST_F(RealServer, DecodeUnderPrefill) {
  auto r = run("decode-under-prefill", {{"decode-tokens", 60},
                                        {"trigger-token", 5},
                                        {"long-tokens", 300},
                                        {"short-delay-ms", 20},
                                        {"prompt-tokens", 8},
                                        {"short-tokens", 6}});
  ASSERT_EQ(r.requests.size(), 3u);
  EXPECT_TRUE(measured(r, "B TTFT"));
  EXPECT_TRUE(measured(r, "C TTFT"));
}

TEST_F(RealServer, ThreeSessions) {
  auto r = run("three-sessions", {{"long-tokens", 300},
                                  {"short-delay-ms", 20},
                                  {"long-max-tokens", 4},
                                  {"short-max-tokens", 4}});
  ASSERT_EQ(r.requests.size(), 3u);
  EXPECT_TRUE(measured(r, "worst short TTFT"));
}

TEST_F(RealServer, HolSequential) {
  auto r = run("hol-sequential", {{"long-tokens", 300},
                                  {"short-delay-ms", 10},
                                  {"long-max-tokens", 4},
                                  {"short-max-tokens", 4}});
  ASSERT_EQ(r.requests.size(), 2u);
  EXPECT_TRUE(measured(r, "B queue wait"));
}

TEST_F(RealServer, Agents) {
  auto r = run("agents", {{"sessions", 2},
                          {"turns", 3},
                          {"chunk-min-tokens", 30},
                          {"chunk-max-tokens", 60},
                          {"decode-tokens", 6}});
  ASSERT_EQ(r.requests.size(), 6u);
  // Each turn resends the whole history, so the prompt grows turn by turn.
  EXPECT_GT(r.requests[2].usage.prompt_tokens.value_or(0),
            r.requests[1].usage.prompt_tokens.value_or(0));
  EXPECT_TRUE(measured(r, "turn 3 mean TTFT"));
}

TEST_F(RealServer, Throughput) {
  auto r = run("throughput", {{"streams", 3}, {"prompt-tokens", 10}, {"decode-tokens", 20}});
  ASSERT_EQ(r.requests.size(), 3u);
  EXPECT_TRUE(measured(r, "aggregate throughput"));
}

}  // namespace
}  // namespace baton::bench
