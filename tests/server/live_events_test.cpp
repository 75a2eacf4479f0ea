// The live view over HTTP (/dashboard, /events) as hostile or careless clients use it: viewers
// that never read, one that stops reading while the loop runs thousands of steps, more viewers
// than the cap, a browser's Basic credentials, and a shutdown with viewers attached.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "server/live/live_hub.h"
#include "server/server_fixture.h"
#include "server/sse_client.h"

namespace baton::server {
namespace {

using testing::FixtureOptions;
using testing::parse;
using testing::RawSocket;
using testing::ServerHarness;

const std::string kEvents = "GET /events HTTP/1.1\r\nHost: x\r\n";

std::string completion(int max_tokens, const std::string& prompt = "hello") {
  return R"({"prompt":")" + prompt + R"(","max_tokens":)" + std::to_string(max_tokens) +
         R"(,"ignore_eos":true})";
}

// The data of every `event: <name>` in an SSE text, parsed.
std::vector<nlohmann::json> events_named(const std::string& text, const std::string& name) {
  std::vector<nlohmann::json> out;
  for (const auto& e : testing::sse_events(text)) {
    if (e.find("event: " + name + "\n") == std::string::npos) continue;
    const size_t d = e.find("data: ");
    if (d != std::string::npos) out.push_back(parse(e.substr(d + 6, e.find('\n', d) - d - 6)));
  }
  return out;
}

// The server's resident memory, from /proc (the server runs in this process).
int64_t rss_kb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return 0;
}

TEST(LiveEvents, DashboardPageIsOneSelfContainedDocument) {
  ServerHarness h;
  auto r = h.client()->Get("/dashboard");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(r->get_header_value("Content-Security-Policy").find("default-src 'none'"),
            std::string::npos);
  EXPECT_NE(r->body.find("new EventSource(\"events\")"), std::string::npos);
  // Nothing from elsewhere: no script, style or image from another origin.
  EXPECT_EQ(r->body.find("src=\"http"), std::string::npos);
  EXPECT_EQ(r->body.find("href=\"http"), std::string::npos);
  auto post = h.client()->Post("/dashboard", "{}", "application/json");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
}

TEST(LiveEvents, StreamCarriesEveryStepOfARequestAndItsLife) {
  ServerHarness h;
  RawSocket viewer(h.port());
  ASSERT_TRUE(viewer.send_all(kEvents + "\r\n"));
  ASSERT_TRUE(viewer.read_until("event: status", 5000)) << viewer.received();
  auto r = h.client()->Post("/v1/completions", completion(20), "application/json");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200);
  ASSERT_TRUE(viewer.read_until("\"what\":\"finished\"", 5000)) << viewer.received();
  const auto& text = viewer.received();
  EXPECT_NE(text.find("text/event-stream"), std::string::npos);
  auto hello = events_named(text, "hello");
  ASSERT_EQ(hello.size(), 1u);
  EXPECT_EQ(hello[0]["capacity"], 8192);
  auto steps = events_named(text, "step");
  ASSERT_FALSE(steps.empty());
  int decode_rows = 0, prefill = 0;
  std::vector<std::string> life;
  uint64_t last_seq = 0;
  bool first = true;
  for (const auto& s : steps) {
    ASSERT_TRUE(s.is_object()) << text;
    if (!first) {
      EXPECT_EQ(s["seq"].get<uint64_t>(), last_seq + 1);  // none missing
    }
    first = false;
    last_seq = s["seq"];
    for (const auto& row : s["rows"]) {
      decode_rows += row[1].get<int>();
      prefill += row[2].get<int>();
    }
    for (const auto& e : s.value("events", nlohmann::json::array())) life.push_back(e["what"]);
  }
  EXPECT_EQ(prefill, 5);       // "hello", one token per byte
  EXPECT_EQ(decode_rows, 19);  // the first token came with the prefill
  EXPECT_EQ(life, (std::vector<std::string>{"admitted", "first_token", "finished"}));
  auto finished = steps.back()["events"].back();
  EXPECT_EQ(finished["generated"], 20);
  EXPECT_EQ(finished["prompt_tokens"], 5);
  EXPECT_GE(finished["ttft_ms"].get<double>(), 0);
}

TEST(LiveEvents, KeyIsAskedForAndTakenAsBearerOrBasicPassword) {
  FixtureOptions o;
  o.server.api_key = "sekrit";
  ServerHarness h(o);
  auto ask = [&](const std::string& auth) {
    RawSocket s(h.port());
    s.send_all(kEvents + auth + "\r\n");
    s.read_until("\r\n\r\n", 5000);
    return s.received();
  };
  std::string none = ask("");
  EXPECT_EQ(none.rfind("HTTP/1.1 401", 0), 0u) << none;
  EXPECT_NE(none.find("WWW-Authenticate: Basic realm=\"baton\""), std::string::npos) << none;
  // "operator:sekrit", ":sekrit", padded and not.
  std::string basic = ask("Authorization: Basic b3BlcmF0b3I6c2Vrcml0\r\n");
  EXPECT_EQ(basic.rfind("HTTP/1.1 200", 0), 0u) << basic;
  EXPECT_EQ(ask("Authorization: Basic OnNla3JpdA==\r\n").rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_EQ(ask("Authorization: Bearer sekrit\r\n").rfind("HTTP/1.1 200", 0), 0u);
  // "operator:wrong", no colon, not base64, empty, and the key as the user name.
  // Groups cut short (1 to 3 characters) and padding alone size the decoder's buffer at its
  // edges.
  for (const char* bad : {"Basic b3BlcmF0b3I6d3Jvbmc=", "Basic c2Vrcml0", "Basic ***", "Basic ",
                          "Basic c2Vrcml0Og==", "Basic O", "Basic On", "Basic OnN",
                          "Basic ====", "Basic OnNla3JpdA=x", "Basic OnNl!a3JpdA"}) {
    std::string got = ask(std::string("Authorization: ") + bad + "\r\n");
    EXPECT_EQ(got.rfind("HTTP/1.1 401", 0), 0u) << bad << "\n" << got;
  }
  auto page = h.client()->Get("/dashboard");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 401);
  EXPECT_TRUE(page->has_header("WWW-Authenticate"));
}

// 100 viewers that never read and one that stops reading: the requests run at full speed, the
// stalled viewer is told what it lost when it reads again, and memory stays bounded.
TEST(LiveEvents, IdleAndStalledViewersNeitherSlowTheLoopNorHoldMemory) {
  FixtureOptions o;
  o.sched.parallel = 4;
  o.sched.ctx = 4096;
  o.sched.live_steps = 64;
  ServerHarness h(o);
  const int64_t rss_before = rss_kb();
  std::vector<std::unique_ptr<RawSocket>> idle;
  for (int i = 0; i < 100; ++i) {
    idle.push_back(std::make_unique<RawSocket>(h.port(), 4096));
    ASSERT_TRUE(idle.back()->send_all(kEvents + "\r\n"));
  }
  RawSocket stalled(h.port(), 4096);
  ASSERT_TRUE(stalled.send_all(kEvents + "\r\n"));
  ASSERT_TRUE(stalled.read_until("event: status", 5000));
  std::vector<std::thread> clients;
  std::vector<int> status(8, 0);
  for (int i = 0; i < 8; ++i) {
    clients.emplace_back([&, i] {
      auto r = h.client(60)->Post("/v1/completions", completion(600, "p" + std::to_string(i)),
                                  "application/json");
      status[static_cast<size_t>(i)] = r ? r->status : -1;
    });
  }
  for (auto& t : clients) t.join();
  for (int s : status) EXPECT_EQ(s, 200);
  // Every request ran: at least 1,200 steps, far past the 64 the ring keeps.
  auto m = h.loop().metrics();
  uint64_t steps = 0;
  for (const auto& [kind, n] : m.steps_total) steps += n;
  EXPECT_GE(steps, 1200u);
  // The stalled viewer reads again: it lost steps, was told so, and gets the recent ones.
  stalled.clear();
  ASSERT_TRUE(stalled.read_until("event: lost", 10000)) << stalled.received().substr(0, 2000);
  auto lost = events_named(stalled.received(), "lost");
  ASSERT_FALSE(lost.empty());
  EXPECT_GT(lost[0]["steps"].get<uint64_t>(), 0u);
  // A status snapshot counts the viewers: 101 connected.
  ASSERT_TRUE(stalled.read_until("\"viewers\":101", 5000));
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  // The ring and a write's worth per viewer: a few MB, not one buffer per viewer per step.
  EXPECT_LT(rss_kb() - rss_before, 64 * 1024) << "KB grown";
#else
  (void)rss_before;
#endif
}

TEST(LiveEvents, ViewersPastTheCapAreRefusedWithRetryAfter) {
  ServerHarness h;
  std::vector<std::unique_ptr<RawSocket>> viewers;
  for (int i = 0; i < LiveHub::kMaxViewers; ++i) {
    viewers.push_back(std::make_unique<RawSocket>(h.port()));
    ASSERT_TRUE(viewers.back()->send_all(kEvents + "\r\n"));
    ASSERT_TRUE(viewers.back()->read_until("event: hello", 5000)) << i;
  }
  RawSocket extra(h.port());
  extra.send_all(kEvents + "\r\n");
  ASSERT_TRUE(extra.read_until("too_many_viewers", 5000)) << extra.received();
  EXPECT_EQ(extra.received().rfind("HTTP/1.1 503", 0), 0u);
  EXPECT_NE(extra.received().find("Retry-After: 5"), std::string::npos);
  // One leaves: its slot opens once the server has seen it go.
  viewers.pop_back();
  bool admitted = false;
  for (int i = 0; i < 50 && !admitted; ++i) {
    RawSocket again(h.port());
    again.send_all(kEvents + "\r\n");
    again.read_until("\r\n\r\n", 5000);
    admitted = again.received().rfind("HTTP/1.1 200", 0) == 0;
    if (!admitted) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(admitted);
}

TEST(LiveEvents, ShutdownEndsEveryViewersStream) {
  auto h = std::make_unique<ServerHarness>();
  std::vector<std::unique_ptr<RawSocket>> viewers;
  for (int i = 0; i < 3; ++i) {
    viewers.push_back(std::make_unique<RawSocket>(h->port()));
    ASSERT_TRUE(viewers.back()->send_all(kEvents + "\r\n"));
    ASSERT_TRUE(viewers.back()->read_until("event: hello", 5000));
  }
  h->loop().shutdown();
  for (auto& v : viewers) {
    ASSERT_TRUE(v->read_until("event: bye", 5000)) << v->received();
    // The chunked body ends: the stream is complete, not cut.
    EXPECT_TRUE(v->read_until("0\r\n\r\n", 5000));
  }
  h.reset();
}

}  // namespace
}  // namespace baton::server
