// What one request may make the server hold: stop strings are bounded in bytes and shared by
// every choice, /tokenize and /detokenize are bounded by --ctx like the completion routes.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "server/answer/stop_set.h"
#include "server_fixture.h"

namespace baton::server::testing {
namespace {

using nlohmann::json;

void expect_400(const httplib::Result& r, const std::string& param, const std::string& needle) {
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body.substr(0, 300);
  expect_error_shape(r->body, param);
  auto e = parse(r->body)["error"];
  EXPECT_EQ(e["param"], param) << r->body;
  EXPECT_NE(e["message"].get<std::string>().find(needle), std::string::npos) << r->body;
}

TEST(RequestBounds, ManyChoicesWithHugeStopStringsAreRefused) {
  ServerHarness h;
  auto c = h.client();
  const std::string big(1900 * 1000, 'x');
  json body = {{"prompt", "hello"}, {"n", 64}, {"max_tokens", 4}, {"stop", {big, big, big, big}}};
  expect_400(post(*c, "/v1/completions", body), "stop", std::to_string(kMaxStopBytes));
  body = {{"messages", {{{"role", "user"}, {"content", "hi"}}}},
          {"n", 64},
          {"stop", {std::string(kMaxStopBytes, 'a'), std::string(kMaxStopBytes, 'b'), "c"}}};
  expect_400(post(*c, "/v1/chat/completions", body), "stop", std::to_string(kMaxStopTotalBytes));
  body = {{"model", "claude"},
          {"max_tokens", 4},
          {"messages", {{{"role", "user"}, {"content", "hi"}}}},
          {"stop_sequences", {big}}};
  auto r = post(*c, "/v1/messages", body);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body.substr(0, 300);
  EXPECT_NE(r->body.find(std::to_string(kMaxStopBytes)), std::string::npos) << r->body;
}

// 64 choices with stops at the limit run, and all of them share the request's one StopSet.
TEST(RequestBounds, EveryChoiceSharesTheRequestsStopSet) {
  FixtureOptions o;
  o.engine.sleep_us_per_step = 2000;
  ServerHarness h(o);
  const size_t before = StopSet::live();
  size_t most = 0;
  std::atomic<bool> done{false};
  std::thread watch([&] {
    while (!done) {
      most = std::max(most, StopSet::live());
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  json body = {{"prompt", "hello"},
               {"n", 64},
               {"max_tokens", 24},
               {"ignore_eos", true},
               {"stop", {std::string(kMaxStopBytes, 'a'), std::string(kMaxStopBytes, 'b')}}};
  auto r = post(*h.client(), "/v1/completions", body);
  done = true;
  watch.join();
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body.substr(0, 300);
  EXPECT_EQ(parse(r->body)["choices"].size(), 64u);
  EXPECT_EQ(most, before + 1) << "one set per request, whatever its n";
  EXPECT_TRUE(h.wait_idle());
  // Freed with the last choice (the loop retires requests just after their last event).
  for (int i = 0; i < 500 && StopSet::live() != before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(StopSet::live(), before);
}

TEST(RequestBounds, TokenizeIsBoundedByTheContext) {
  FixtureOptions o;
  o.sched.ctx = 512;
  ServerHarness h(o);
  auto c = h.client();
  // The fake codec covers one byte per token: 512 bytes fit, 513 do not.
  auto r = post(*c, "/tokenize", {{"content", std::string(512, 'a')}, {"with_pieces", true}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body.substr(0, 300);
  auto j = parse(r->body);
  ASSERT_EQ(j["tokens"].size(), 512u);
  EXPECT_EQ(j["tokens"][0], json({{"id", 'a'}, {"piece", std::string(1, fake_char('a'))}}));
  expect_400(post(*c, "/tokenize", {{"content", std::string(513, 'a')}, {"with_pieces", true}}),
             "content", "--ctx");
  r = post(*c, "/tokenize", {{"content", std::string(7 << 20, 'a')}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_EQ(parse(r->body)["error"]["code"], "context_length_exceeded");
}

TEST(RequestBounds, DetokenizeIsBoundedByTheContext) {
  FixtureOptions o;
  o.sched.ctx = 256;
  ServerHarness h(o);
  auto c = h.client();
  auto r = post(*c, "/detokenize", {{"tokens", std::vector<int>(256, 65)}});
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(parse(r->body)["content"].get<std::string>().size(), 256u);
  r = post(*c, "/detokenize", {{"tokens", std::vector<int>(257, 65)}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_EQ(parse(r->body)["error"]["code"], "context_length_exceeded") << r->body;
}

}  // namespace
}  // namespace baton::server::testing
