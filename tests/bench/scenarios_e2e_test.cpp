// Every scenario, scaled down, against the in-process mock server.
#include <gtest/gtest.h>

#include <cmath>

#include "bench/mock_server.h"
#include "bench/scenarios.h"
#include "bench/stats.h"

namespace baton::bench {
namespace {

using testing::MockConfig;
using testing::MockServer;

ScenarioResult run(const MockServer& srv, const std::string& name,
                   std::map<std::string, double> knobs, bool chat = false,
                   const std::string& session_headers = "affinity") {
  ScenarioOptions opt;
  opt.model = "mock-model";
  opt.timeout_s = 30;
  opt.chat = chat;
  opt.session_headers = session_headers;
  opt.knobs = std::move(knobs);
  return run_scenario(name, parse_endpoint(srv.url()), opt,
                      Clock::now() + std::chrono::seconds(60));
}

const Figure& figure(const ScenarioResult& r, const std::string& name) {
  for (const auto& f : r.figures) {
    if (f.name == name) return f;
  }
  ADD_FAILURE() << "no figure " << name;
  static Figure none;
  return none;
}

void expect_all_ok(const ScenarioResult& r) {
  for (const auto& q : r.requests) {
    EXPECT_TRUE(q.ok()) << q.label << ": " << (q.ok() ? "" : q.errors.front());
    EXPECT_EQ(static_cast<long>(q.token_ms.size()), q.max_tokens) << q.label;
    EXPECT_EQ(q.usage.completion_tokens.value_or(-1), q.max_tokens) << q.label;
    EXPECT_LE(q.send_ms, q.first_token_ms);
    EXPECT_LE(q.first_token_ms, q.end_ms);
  }
}

TEST(ScenarioE2E, DecodeUnderPrefill) {
  MockServer srv;
  auto r = run(srv, "decode-under-prefill",
               {{"decode-tokens", 40},
                {"trigger-token", 5},
                {"long-tokens", 300},
                {"short-delay-ms", 20},
                {"prompt-tokens", 8},
                {"short-tokens", 6}});
  ASSERT_EQ(r.requests.size(), 3u);
  expect_all_ok(r);
  const auto &a = r.requests[0], &b = r.requests[1], &c = r.requests[2];
  EXPECT_EQ(a.label, "A decode");
  EXPECT_GE(b.send_ms, a.token_ms[4]);  // B went out after A's 5th token
  EXPECT_GE(c.send_ms - b.send_ms, 20);
  for (const char* f :
       {"A median gap before B", "A worst gap while B prefills", "B TTFT", "C TTFT"}) {
    EXPECT_FALSE(std::isnan(figure(r, f).value)) << f;
  }
  EXPECT_EQ(r.options["long-tokens"], 300);
  EXPECT_EQ(r.options["long-max-tokens"], 16);  // the scenario default
  // The requests asked for fresh, distinct prompts of the requested sizes.
  auto bodies = srv.bodies();
  ASSERT_EQ(bodies.size(), 3u);
  EXPECT_EQ(bodies[0]["stream"], true);
  EXPECT_EQ(bodies[0]["ignore_eos"], true);
  EXPECT_EQ(bodies[0]["stream_options"]["include_usage"], true);
  EXPECT_EQ(bodies[0]["temperature"], 0);
  EXPECT_NE(bodies[0]["prompt"], bodies[2]["prompt"]);
  EXPECT_EQ(b.usage.prompt_tokens.value_or(0), 300);
}

TEST(ScenarioE2E, ThreeSessions) {
  MockServer srv;
  auto r = run(srv, "three-sessions",
               {{"long-tokens", 500},
                {"short-delay-ms", 10},
                {"short-max-tokens", 4},
                {"long-max-tokens", 4}});
  ASSERT_EQ(r.requests.size(), 3u);
  expect_all_ok(r);
  EXPECT_EQ(r.requests[1].label, "S1 short");
  EXPECT_GE(r.requests[1].send_ms - r.requests[0].send_ms, 10);
  EXPECT_FALSE(std::isnan(figure(r, "worst short TTFT").value));
  EXPECT_FALSE(std::isnan(figure(r, "L total time").value));
}

TEST(ScenarioE2E, HolSequentialShowsTheShortWaitingBehindTheLong) {
  MockConfig cfg;
  cfg.one_at_a_time = true;
  cfg.prefill_us_per_word = 500;  // 400 words: a 200 ms prefill for B to land in
  MockServer srv(cfg);
  auto r = run(srv, "hol-sequential",
               {{"long-tokens", 400},
                {"short-delay-ms", 50},
                {"long-max-tokens", 3},
                {"short-max-tokens", 3}});
  ASSERT_EQ(r.requests.size(), 2u);
  expect_all_ok(r);
  const auto &a = r.requests[0], &b = r.requests[1];
  // A one-at-a-time server finishes A before B's first token, whatever the timing.
  EXPECT_GE(b.first_token_ms, a.token_ms.back());
  EXPECT_FALSE(std::isnan(figure(r, "B queue wait").value));
  EXPECT_FALSE(std::isnan(figure(r, "A total time").value));
}

TEST(ScenarioE2E, AgentsGrowTheirPromptAndSeeCachedTokens) {
  MockServer srv;
  auto r = run(srv, "agents",
               {{"sessions", 2},
                {"turns", 3},
                {"chunk-min-tokens", 20},
                {"chunk-max-tokens", 40},
                {"decode-tokens", 4}});
  ASSERT_EQ(r.requests.size(), 6u);
  expect_all_ok(r);
  EXPECT_EQ(r.requests[0].label, "s1 turn 1");
  EXPECT_EQ(r.requests[5].label, "s2 turn 3");
  // Each turn's prompt is the previous prompt + answer + a new chunk of 20..40 words.
  std::map<std::string, std::string> last;
  for (const auto& body : srv.bodies()) {
    std::string p = body["prompt"];
    for (const auto& [_, prev] : last) {
      if (p.starts_with(prev)) {
        auto words = std::count(p.begin() + static_cast<long>(prev.size()), p.end(), ' ');
        EXPECT_GE(words, 20);
      }
    }
    last[p.substr(0, 30)] = p;
  }
  EXPECT_GT(r.requests[1].usage.cached_tokens.value_or(0), 0);
  EXPECT_GT(figure(r, "cached share, turns 2+").value, 50);
}

TEST(ScenarioE2E, AgentsOverChatCompletions) {
  MockServer srv;
  auto r = run(srv, "agents",
               {{"sessions", 1},
                {"turns", 3},
                {"chunk-min-tokens", 5},
                {"chunk-max-tokens", 5},
                {"decode-tokens", 3}},
               true);
  ASSERT_EQ(r.requests.size(), 3u);
  expect_all_ok(r);  // the role-only first chunk is not counted as a token
  auto bodies = srv.bodies();
  ASSERT_EQ(bodies.size(), 3u);
  EXPECT_EQ(bodies[0]["messages"].size(), 2u);  // system, user
  EXPECT_EQ(bodies[2]["messages"].size(), 6u);  // + assistant, user per turn
  EXPECT_EQ(bodies[2]["messages"][2]["content"], " tok0 tok1 tok2");
}

// A proxy in front pins sessions by the headers agents send: one id per session, on every turn.
TEST(ScenarioE2E, AgentsNameTheirSessionInHeaders) {
  const std::map<std::string, double> knobs = {{"sessions", 2},
                                               {"turns", 2},
                                               {"chunk-min-tokens", 5},
                                               {"chunk-max-tokens", 5},
                                               {"decode-tokens", 2}};
  {
    MockServer srv;
    expect_all_ok(run(srv, "agents", knobs));
    std::map<std::string, int> turns_by_id;
    for (const auto& h : srv.session_headers()) {
      ASSERT_EQ(h.size(), 1u) << "only x-session-affinity by default";
      ++turns_by_id[h.at("x-session-affinity")];
    }
    EXPECT_EQ(turns_by_id.size(), 2u) << "one id per session";
    for (const auto& [id, n] : turns_by_id) EXPECT_EQ(n, 2) << id << " on every turn";
  }
  {
    MockServer srv;
    expect_all_ok(run(srv, "agents", knobs, false, "all"));
    for (const auto& h : srv.session_headers()) {
      ASSERT_EQ(h.size(), 4u);
      EXPECT_EQ(h.at("session_id"), h.at("x-session-affinity"));
      EXPECT_EQ(h.at("x-claude-code-session-id"), h.at("x-session-affinity"));
    }
  }
  {
    MockServer srv;
    expect_all_ok(run(srv, "agents", knobs, false, "none"));
    for (const auto& h : srv.session_headers()) EXPECT_TRUE(h.empty());
  }
}

// edit: each copy stream's prompt is a text, the server's continuation of it, and the text again.
TEST(ScenarioE2E, EditPromptsRepeatTheServersOwnContinuation) {
  MockServer srv;
  auto r = run(srv, "edit", {{"streams", 2}, {"prompt-tokens", 12}, {"decode-tokens", 5}});
  ASSERT_EQ(r.requests.size(), 3u) << "one prose stream and two copy streams";
  expect_all_ok(r);
  const auto bodies = srv.bodies();
  ASSERT_EQ(bodies.size(), 5u) << "two continuations, then the three timed streams";
  for (size_t i = 0; i < 2; ++i) {
    const std::string text = bodies[i]["prompt"];
    int copies = 0;
    for (size_t j = 2; j < bodies.size(); ++j) {
      const std::string p = bodies[j]["prompt"];
      if (p.starts_with(text) && p.ends_with("\n\n" + text)) ++copies;
    }
    EXPECT_EQ(copies, 1) << "text " << i;
  }
  EXPECT_GT(figure(r, "copy streams' decode").value, 0);
  EXPECT_FALSE(std::isnan(figure(r, "prose stream's worst gap").value));
}

TEST(ScenarioE2E, Throughput) {
  MockServer srv;
  auto r = run(srv, "throughput", {{"streams", 3}, {"prompt-tokens", 10}, {"decode-tokens", 12}});
  ASSERT_EQ(r.requests.size(), 3u);
  expect_all_ok(r);
  EXPECT_GT(figure(r, "aggregate throughput").value, 0);
  EXPECT_FALSE(std::isnan(figure(r, "p99 gap, all streams").value));
}

TEST(ScenarioE2E, UnknownScenarioNamesTheChoices) {
  MockServer srv;
  try {
    run(srv, "nope", {});
    FAIL();
  } catch (const BenchError& e) {
    EXPECT_NE(std::string(e.what()).find("decode-under-prefill"), std::string::npos);
  }
}

}  // namespace
}  // namespace baton::bench
