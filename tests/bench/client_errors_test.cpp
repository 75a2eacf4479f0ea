// The client against servers that misbehave: unreachable, HTTP errors, stalls, keepalives,
// non-streaming answers; and the whole `bench serve` flow with --compare and --out.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "bench/bench_serve.h"
#include "bench/mock_server.h"
#include "bench/openai_client.h"
#include "bench/prompt_text.h"
#include "support/shared_files.h"

namespace baton::bench {
namespace {

using testing::MockConfig;
using testing::MockServer;

RequestRecord one_request(const std::string& url, double timeout_s = 10, bool chat = false) {
  StreamRequest req;
  req.label = "r";
  req.model = "mock-model";
  req.prompt = "hello there";
  req.chat = chat;
  req.messages = nlohmann::json::array({{{"role", "user"}, {"content", "hi"}}});
  req.max_tokens = 5;
  req.timeout_s = timeout_s;
  auto t0 = Clock::now();
  return stream_request(parse_endpoint(url), req, t0, t0 + std::chrono::seconds(30));
}

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

TEST(Client, ConnectionRefusedSaysSoWithTheUrl) {
  std::string url = "http://127.0.0.1:" + std::to_string(testing::closed_port());
  auto r = one_request(url);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.errors[0], "cannot connect to " + url)) << r.errors[0];
  try {
    first_model_id(parse_endpoint(url), 5);
    FAIL() << "expected BenchError";
  } catch (const BenchError& e) {
    EXPECT_TRUE(contains(e.what(), "cannot connect to " + url)) << e.what();
  }
}

TEST(Client, HttpErrorCarriesStatusAndMessage) {
  MockConfig cfg;
  cfg.http_error = 503;
  MockServer srv(cfg);
  auto r = one_request(srv.url());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.http_status, 503);
  EXPECT_TRUE(contains(r.errors[0], "HTTP 503")) << r.errors[0];
  EXPECT_TRUE(contains(r.errors[0], "mock failure for the test")) << r.errors[0];
}

TEST(Client, StalledServerTimesOut) {
  MockConfig cfg;
  cfg.stall_ms = 20000;
  MockServer srv(cfg);
  auto r = one_request(srv.url(), 0.3);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.errors[0], "timed out")) << r.errors[0];
  EXPECT_TRUE(r.token_ms.empty());
}

TEST(Client, KeepaliveCommentMakesQueueWaitFallBackToTtft) {
  MockConfig cfg;
  cfg.keepalive_first = true;
  MockServer srv(cfg);
  auto r = one_request(srv.url());
  ASSERT_TRUE(r.ok()) << r.errors.front();
  EXPECT_TRUE(r.first_byte_was_comment);
  EXPECT_TRUE(r.queue_wait_is_fallback());
  EXPECT_DOUBLE_EQ(r.queue_wait_ms(), r.ttft_ms());
  EXPECT_EQ(r.token_ms.size(), 5u);
}

TEST(Client, NonStreamingAnswerIsAnError) {
  MockConfig cfg;
  cfg.no_stream = true;
  MockServer srv(cfg);
  auto r = one_request(srv.url());
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(contains(r.errors[0], "without streaming")) << r.errors[0];
}

TEST(Client, ChatStreamCountsOnlyTextChunks) {
  MockServer srv;
  auto r = one_request(srv.url(), 10, true);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.token_ms.size(), 5u);
  EXPECT_LT(r.first_event_ms, r.first_token_ms + 1e-9);
  EXPECT_EQ(r.text, " tok0 tok1 tok2 tok3 tok4");
  EXPECT_EQ(r.usage.cached_tokens.value_or(-1), 0);
}

TEST(Client, ApplyEventReadsUsageErrorsAndLlamaTimings) {
  RequestRecord r;
  EXPECT_TRUE(apply_event(R"({"choices":[{"text":"a"}]})", false, r));
  EXPECT_FALSE(apply_event(R"({"choices":[{"text":""}]})", false, r));
  EXPECT_FALSE(apply_event(R"({"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":1,
      "prompt_tokens_details":{"cached_tokens":4}}})",
                           false, r));
  EXPECT_EQ(r.usage.prompt_tokens.value_or(0), 9);
  EXPECT_EQ(r.usage.cached_tokens.value_or(0), 4);
  RequestRecord l;
  apply_event(R"({"choices":[{"text":"x"}],"timings":{"cache_n":17}})", false, l);
  EXPECT_EQ(l.usage.cached_tokens.value_or(0), 17);
  EXPECT_TRUE(l.ok());
  apply_event(R"({"error":{"message":"context overflow"}})", false, l);
  apply_event("not json", false, l);
  ASSERT_EQ(l.errors.size(), 2u);
  EXPECT_TRUE(contains(l.errors[0], "context overflow"));
}

TEST(Endpoint, ParsesPrefixesAndRejectsBadUrls) {
  auto e = parse_endpoint("http://h:1/v1/");
  EXPECT_EQ(e.host_port, "http://h:1");
  EXPECT_EQ(e.base_path, "");
  EXPECT_EQ(parse_endpoint("https://h/api/v1").base_path, "/api");
  EXPECT_THROW(parse_endpoint("127.0.0.1:8080"), BenchError);
  EXPECT_THROW(parse_endpoint("ftp://h"), BenchError);
  EXPECT_THROW(parse_endpoint("http://"), BenchError);
}

TEST(PromptText, DeterministicDistinctAndSized) {
  EXPECT_EQ(make_prompt(50, 1.0, 7), make_prompt(50, 1.0, 7));
  EXPECT_NE(make_prompt(50, 1.0, 7), make_prompt(50, 1.0, 8));
  auto words = [](const std::string& s) { return std::count(s.begin(), s.end(), ' ') + 1; };
  EXPECT_EQ(words(make_prompt(50, 1.0, 1)), 50);
  EXPECT_EQ(words(make_prompt(50, 0.5, 1)), 25);
  EXPECT_EQ(words(make_prompt(1, 0.1, 1)), 1);
  EXPECT_EQ(make_prompt(0, 1.0, 1), "");
  EXPECT_EQ(make_prompt(3000, 1, 1).find("  "), std::string::npos);
}

TEST(BenchServe, CompareWritesJsonAndSvgAndPrintsRatios) {
  MockServer a, b;
  BenchServeOptions opt;
  opt.url = a.url();
  opt.compare_url = b.url();
  opt.scenario = "throughput";
  opt.out_dir = (baton::testing::scratch_dir() / "out").string();
  opt.scenario_options.knobs = {{"streams", 2}, {"prompt-tokens", 5}, {"decode-tokens", 6}};
  std::ostringstream out, err;
  EXPECT_EQ(run_bench_serve(opt, out, err), 0) << err.str();
  EXPECT_TRUE(contains(out.str(), "comparison")) << out.str();
  EXPECT_TRUE(contains(out.str(), "mock-model"));  // discovered through /v1/models
  std::ifstream jf(opt.out_dir + "/throughput.json");
  auto j = nlohmann::json::parse(jf);
  EXPECT_EQ(j["server"], a.url());
  ASSERT_EQ(j["requests"].size(), 2u);
  EXPECT_EQ(j["requests"][0]["token_ms"].size(), 6u);
  for (const char* k : {"label", "send_ms", "first_token_ms", "end_ms", "usage", "errors"}) {
    EXPECT_TRUE(j["requests"][0].contains(k)) << k;
  }
  EXPECT_EQ(j["compare"][0]["server"], b.url());
  EXPECT_TRUE(std::filesystem::exists(opt.out_dir + "/throughput.svg"));
  EXPECT_TRUE(std::filesystem::exists(opt.out_dir + "/throughput.compare.svg"));
}

TEST(BenchServe, FailedRequestsGiveExitCodeOneAndAReason) {
  MockConfig cfg;
  cfg.http_error = 500;
  MockServer srv(cfg);
  BenchServeOptions opt;
  opt.url = srv.url();
  opt.scenario = "throughput";
  opt.scenario_options.knobs = {{"streams", 2}, {"decode-tokens", 2}};
  std::ostringstream out, err;
  EXPECT_EQ(run_bench_serve(opt, out, err), 1);
  EXPECT_TRUE(contains(err.str(), "2 of 2 requests failed")) << err.str();
  EXPECT_TRUE(contains(err.str(), "HTTP 500")) << err.str();
}

TEST(BenchServe, RunLimitEndsTheRun) {
  MockConfig cfg;
  cfg.stall_ms = 20000;
  MockServer srv(cfg);
  BenchServeOptions opt;
  opt.url = srv.url();
  opt.scenario = "decode-under-prefill";
  opt.run_limit_s = 0.5;
  opt.scenario_options.model = "m";
  std::ostringstream out, err;
  EXPECT_EQ(run_bench_serve(opt, out, err), 1);
  EXPECT_TRUE(contains(out.str(), "run limit")) << out.str();
}

}  // namespace
}  // namespace baton::bench
