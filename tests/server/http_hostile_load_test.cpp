// Many hostile or slow clients at once: slowloris connections cannot lock out normal clients,
// deadlines hold from the first byte, memory per request is bounded by its size, and a fixed
// set of threads carries a thousand streams.
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <thread>

#include "server_fixture.h"
#include "sse_client.h"
#include "support/time_budget.h"

namespace baton::server::testing {
namespace {

using namespace std::chrono_literals;
using baton::testing::kExitSlack;
using baton::testing::kPromptWait;
using baton::testing::kSlowWait;
using baton::testing::scaled;
using baton::testing::wait_until;
// Sanitizers multiply memory and time: the load tests scale down and skip RSS bounds there.
using baton::testing::kSanitized;

int ms(std::chrono::milliseconds d) {
  return static_cast<int>(d.count());
}
int seconds(std::chrono::milliseconds d) {
  return static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(d).count());
}
double seconds_f(std::chrono::milliseconds d) {
  return std::chrono::duration<double>(d).count();
}

int thread_count() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

// Peak resident set of this process (test client and server together), in MB.
long peak_rss_mb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6) / 1024;
  }
  return 0;
}

void reset_peak_rss() {
  std::ofstream("/proc/self/clear_refs") << "5";
}

bool health_ok(const ServerHarness& h, int timeout_s = seconds(kPromptWait)) {
  auto r = h.client(timeout_s)->Get("/health");
  return r && r->status == 200;
}

TEST(HostileLoad, HeadDeadlineRunsFromTheFirstByte) {
  const auto header_timeout = 500ms;
  FixtureOptions o;
  o.server.header_timeout_s = seconds_f(header_timeout);
  ServerHarness h(o);
  RawSocket s(h.port());
  auto start = std::chrono::steady_clock::now();
  s.send_all("G");
  // One byte every 100 ms: a per-byte timeout would never fire.
  bool closed = false;
  while (!closed && std::chrono::steady_clock::now() - start < kPromptWait) {
    closed = !s.send_all("X") || s.wait_closed(100);
  }
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(closed) << "a trickling head was never cut off";
  EXPECT_LT(took, header_timeout + kExitSlack);
  EXPECT_NE(s.received().find(" 408 "), std::string::npos) << s.received();
  EXPECT_GE(h.http().counters().timed_out_connections, 1u);
}

TEST(HostileLoad, BodyDeadline) {
  const auto body_timeout = 500ms;
  FixtureOptions o;
  o.server.body_timeout_s = seconds_f(body_timeout);
  ServerHarness h(o);
  RawSocket s(h.port());
  s.send_all("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"prompt\"");
  ASSERT_TRUE(s.wait_closed(ms(body_timeout + kExitSlack))) << "a stalled body was never cut off";
  EXPECT_NE(s.received().find(" 408 "), std::string::npos) << s.received();
}

TEST(HostileLoad, IdleConnectionsAreEvictedForNewOnes) {
  FixtureOptions o;
  o.server.max_connections = 4;
  o.server.evict_min_age_s = 0.1;
  o.server.idle_timeout_s = 3600;  // they stay until evicted
  ServerHarness h(o);
  std::vector<std::unique_ptr<RawSocket>> idle;
  for (int i = 0; i < 4; ++i) idle.push_back(std::make_unique<RawSocket>(h.port()));
  ASSERT_TRUE(wait_until([&] { return h.http().counters().open_connections >= 4; }));
  // Only connections idle for evict_min_age are taken; until they are that old, a new one gets
  // 503, so the client asks again.
  EXPECT_TRUE(wait_until([&] { return health_ok(h); }, kPromptWait, 50ms));
  EXPECT_GE(h.http().counters().evicted_connections, 1u);
}

// What the eviction age protects: a client that has just connected is about to send its
// request, so a new connection never pushes it out; the newcomer gets 503 instead.
TEST(HostileLoad, YoungConnectionsAreNotEvicted) {
  FixtureOptions o;
  o.server.max_connections = 4;
  o.server.evict_min_age_s = 3600;
  o.server.idle_timeout_s = 3600;
  ServerHarness h(o);
  std::vector<std::unique_ptr<RawSocket>> young;
  for (int i = 0; i < 4; ++i) young.push_back(std::make_unique<RawSocket>(h.port()));
  ASSERT_TRUE(wait_until([&] { return h.http().counters().open_connections >= 4; }));
  RawSocket late(h.port());
  late.send_all("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(late.read_until("\r\n\r\n", ms(kPromptWait)));
  EXPECT_EQ(late.received().rfind("HTTP/1.1 503", 0), 0u) << late.received();
  EXPECT_EQ(h.http().counters().evicted_connections, 0u);
  // Each of them still gets its answer.
  for (auto& s : young) {
    s->send_all("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
    ASSERT_TRUE(s->read_until("\r\n\r\n", ms(kPromptWait)));
    EXPECT_EQ(s->received().rfind("HTTP/1.1 200", 0), 0u) << s->received();
  }
}

// Every slot busy with a request in progress: a new connection gets 503 with Retry-After.
TEST(HostileLoad, BusySlotsGive503) {
  FixtureOptions o;
  o.server.max_connections = 2;
  o.sched.parallel = 1;
  o.engine.sleep_us_per_step = 2000;
  ServerHarness h(o);
  std::string body = R"({"prompt":"abc","max_tokens":2000,"ignore_eos":true,"stream":true})";
  RawSocket a(h.port()), b(h.port());
  a.post("/v1/completions", body);
  b.post("/v1/completions", body);
  // One runs, the other waits in the queue; both have their stream head.
  ASSERT_TRUE(a.read_until("\r\n\r\n", ms(kPromptWait)));
  ASSERT_TRUE(b.read_until("\r\n\r\n", ms(kPromptWait)));
  RawSocket c(h.port());
  c.send_all("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(c.read_until("\r\n\r\n", ms(kPromptWait)));
  EXPECT_EQ(c.received().rfind("HTTP/1.1 503", 0), 0u)
      << c.received() << "\n--- a:\n"
      << a.received().substr(0, 400) << "\n--- b:\n"
      << b.received().substr(0, 400);
  EXPECT_NE(c.received().find("Retry-After: 1"), std::string::npos);
  EXPECT_GE(h.http().counters().rejected_connections, 1u);
  a.close();
  b.close();
  EXPECT_TRUE(h.wait_idle(ms(kPromptWait)));
  EXPECT_TRUE(health_ok(h));
}

TEST(HostileLoad, SlowlorisCannotLockOutNormalClients) {
  FixtureOptions o;
  o.server.max_connections = 64;
  // The production age, stretched as much as this build slows the server's reading of a head.
  o.server.evict_min_age_s = seconds_f(scaled(250ms));
  ServerHarness h(o);
  std::vector<std::unique_ptr<RawSocket>> loris;
  for (int i = 0; i < 200; ++i) {
    loris.push_back(std::make_unique<RawSocket>(h.port()));
    loris.back()->send_all("POST /v1/completions HTTP/1.1\r\nHost: x\r\nX-");
  }
  std::atomic<bool> stop{false};
  // Keeps reconnecting what the server closed, one header byte at a time.
  std::thread attacker;
  struct Joiner {
    std::atomic<bool>& stop;
    std::thread& t;
    ~Joiner() {
      stop = true;
      if (t.joinable()) t.join();
    }
  } joiner{stop, attacker};
  attacker = std::thread([&] {
    while (!stop) {
      for (auto& s : loris) {
        if (stop) break;
        if (!s->send_all("a")) {
          s = std::make_unique<RawSocket>(h.port());
          s->send_all("GET / HTTP/1.1\r\nX-");
        }
      }
      // The attacker's pace is relative to the server's: a build that slows the server
      // (sanitizers) slows it as much, or the test measures the sanitizer, not the policy.
      std::this_thread::sleep_for(scaled(20ms));
    }
  });
  // The attack is under way: every slot is taken and newcomers already push out or get turned
  // away.
  ASSERT_TRUE(wait_until([&] {
    auto c = h.http().counters();
    return c.open_connections >= o.server.max_connections &&
           c.evicted_connections + c.rejected_connections >= 1;
  }));
  // A normal client retries a 503 (after its Retry-After) and a connection error, as the OpenAI
  // SDKs do. The attacker refills every slot younger than the eviction age for moments, and on
  // a slow machine (a sanitizer build under load) the server may not read a head before the
  // client's slot is that old; so failed attempts are allowed for as long as a reply may take
  // on this build (a count of attempts ran out on a slower machine under ASan). Being locked out
  // is never getting through.
  int most_attempts = 0;
  auto with_retry = [&most_attempts](auto request) {
    const auto deadline = std::chrono::steady_clock::now() + kPromptWait;
    auto r = request();
    int attempts = 1;
    while ((!r || r->status == 503) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1s);
      r = request();
      ++attempts;
    }
    most_attempts = std::max(most_attempts, attempts);
    return r;
  };
  const int timeout_s = seconds(kPromptWait);
  for (int i = 0; i < 5; ++i) {
    auto health = with_retry([&] { return h.client(timeout_s)->Get("/health"); });
    ASSERT_TRUE(health) << "round " << i << ": " << httplib::to_string(health.error());
    EXPECT_EQ(health->status, 200) << "round " << i;
    auto r = with_retry([&] {
      return h.client(timeout_s)->Post("/v1/completions", R"({"prompt":"abc","max_tokens":3})",
                                       "application/json");
    });
    ASSERT_TRUE(r) << "round " << i << ": " << httplib::to_string(r.error());
    EXPECT_EQ(r->status, 200) << r->body;
  }
  EXPECT_GE(h.http().counters().evicted_connections, 1u);
  std::printf("[ info ] under slowloris a request got through in at most %d attempts\n",
              most_attempts);
}

// 1,000 streams at once, most of them queued and kept alive by comments: the server answers
// /health throughout with the same number of threads it started with.
TEST(HostileLoad, AThousandStreamsOnAFixedSetOfThreads) {
  FixtureOptions o;
  o.server.max_connections = 1100;
  o.server.keepalive_s = 0.2;
  o.sched.max_queue = 1100;
  o.sched.parallel = 4;
  o.engine.sleep_us_per_step = 1000;
  ServerHarness h(o);
  ASSERT_TRUE(health_ok(h));
  int threads_before = thread_count();
  std::vector<std::unique_ptr<RawSocket>> streams;
  std::string body = R"({"prompt":"abc","max_tokens":10,"ignore_eos":true,"stream":true})";
  const int n_streams = kSanitized ? 200 : 1000;
  for (int i = 0; i < n_streams; ++i) {
    streams.push_back(std::make_unique<RawSocket>(h.port()));
    ASSERT_TRUE(streams.back()->ok()) << "connection " << i;
    streams.back()->post("/v1/completions", body);
  }
  auto status = h.client()->Get("/status");
  ASSERT_TRUE(status);
  EXPECT_TRUE(health_ok(h));
  EXPECT_LE(thread_count(), threads_before + 1) << "threads grew with connections";
  for (size_t i = 0; i < streams.size(); ++i) {
    ASSERT_TRUE(streams[i]->read_until("data: [DONE]", ms(kSlowWait)))
        << "stream " << i << " did not finish: " << streams[i]->received().substr(0, 300);
  }
  // The last streams waited in the queue with keepalive comments.
  EXPECT_NE(streams.back()->received().find(": keepalive"), std::string::npos);
  EXPECT_TRUE(health_ok(h));
  EXPECT_EQ(h.http().counters().rejected_connections, 0u);
}

// A prompt of token ids longer than the context is refused while parsing, and sixteen 8 MB
// bodies at once cost far less than the old ~400 MB each.
TEST(HostileLoad, MemoryPerRequestIsBoundedBySize) {
  FixtureOptions o;
  o.sched.ctx = 4096;
  ServerHarness h(o);
  std::string ids = "{\"prompt\":[";
  while (ids.size() < (8u << 20) - 16) ids += "1,";
  ids += "1]}";
  std::string text = "{\"prompt\":\"" + std::string((8u << 20) - 32, 'a') + "\"}";
  reset_peak_rss();
  long before = peak_rss_mb();
  std::vector<std::thread> clients;
  std::atomic<int> refused{0};
  for (int i = 0; i < 16; ++i) {
    clients.emplace_back([&, i] {
      auto r = h.client(60)->Post("/v1/completions", i % 2 ? ids : text, "application/json");
      if (r && r->status == 400 && parse(r->body)["error"]["code"] == "context_length_exceeded") {
        ++refused;
      }
    });
  }
  for (auto& t : clients) t.join();
  long growth = peak_rss_mb() - before;
  EXPECT_EQ(refused.load(), 16);
  // Client copies of the bodies count here too (16 × 8 MB).
  if (!kSanitized) {
    EXPECT_LT(growth, 1024) << "peak RSS grew by " << growth << " MB";
  }
  std::printf("[ info ] 16 concurrent 8 MB bodies: peak RSS +%ld MB (client and server)\n", growth);
  EXPECT_TRUE(health_ok(h));
}

// Shutdown: a stream that finished in the grace period ends with its finish chunk and [DONE];
// one cut by the grace gets an error event and [DONE].
TEST(HostileLoad, ShutdownEndsEveryStreamProperly) {
  // The short stream runs for a quarter of the grace, so it is still running when the shutdown
  // starts and done well within the grace on a loaded machine; the long one would run for
  // twice the whole shutdown's bound.
  const auto step = 20ms, grace = scaled(2s), drain = 600ms;
  const auto bound = grace + drain + kExitSlack;
  const int short_tokens = static_cast<int>(grace / 4 / step);
  const int long_tokens = static_cast<int>(2 * bound / step);
  FixtureOptions o;
  o.sched.shutdown_grace_s = seconds_f(grace);
  o.sched.parallel = 2;
  o.sched.ctx = long_tokens + 64;
  o.engine.sleep_us_per_step = static_cast<int32_t>(step.count() * 1000);
  auto h = std::make_unique<ServerHarness>(o);
  RawSocket shortie(h->port()), longie(h->port());
  shortie.post("/v1/completions", R"({"prompt":"abc","max_tokens":)" +
                                      std::to_string(short_tokens) +
                                      R"(,"ignore_eos":true,"stream":true})");
  longie.post("/v1/completions", R"({"prompt":"abc","max_tokens":)" + std::to_string(long_tokens) +
                                     R"(,"ignore_eos":true,"stream":true})");
  ASSERT_TRUE(shortie.read_until("data: ", ms(kPromptWait)));
  ASSERT_TRUE(longie.read_until("data: ", ms(kPromptWait)));
  auto start = std::chrono::steady_clock::now();
  h->loop().shutdown();
  h->http().stop(drain);
  EXPECT_LT(std::chrono::steady_clock::now() - start, bound);
  ASSERT_TRUE(shortie.wait_closed(ms(kPromptWait)));
  ASSERT_TRUE(longie.wait_closed(ms(kPromptWait)));
  EXPECT_NE(shortie.received().find("\"finish_reason\":\"length\""), std::string::npos);
  EXPECT_NE(shortie.received().find("data: [DONE]"), std::string::npos);
  EXPECT_NE(longie.received().find("\"error\""), std::string::npos)
      << longie.received().substr(longie.received().size() - 300);
  EXPECT_NE(longie.received().find("data: [DONE]"), std::string::npos);
  h.reset();
}

}  // namespace
}  // namespace baton::server::testing

namespace baton::server::testing {
namespace {

// A client that stops reading: its request fails after --send-stall-timeout-ms (here far below
// the old fixed 30 s socket timeout) and its connection is closed; others are unaffected.
TEST(HostileLoad, StalledReaderIsDroppedAfterTheSendStallTimeout) {
  FixtureOptions o;
  o.sched.send_stall_timeout_ms = 300;
  o.server.send_stall_ms = 300;
  o.sched.ctx = 65536;
  ServerHarness h(o);
  RawSocket stalled(h.port(), 1024);
  ASSERT_TRUE(stalled.ok());
  // With 20 logprobs a token is ~400 bytes of SSE: 65000 of them are far more than the kernel's
  // socket buffers hold, however large they grow (without, all of it fit in a slow run).
  stalled.post(
      "/v1/completions",
      R"({"prompt":"abc","max_tokens":65000,"ignore_eos":true,"stream":true,"logprobs":20})");
  // Loopback sockets absorb a few MB before a write blocks; then the deadline runs. Filling
  // them takes seconds on an idle machine (kSlowWait is that with room for load).
  auto failed = [&] {
    auto m = h.loop().metrics();
    return m.requests_total["failed"] + m.requests_total["cancelled"];
  };
  // Started: it shows in /status (or has already been dropped).
  ASSERT_TRUE(wait_until([&] { return !h.loop().status().requests.empty() || failed() > 0; }))
      << "the stream never started";
  const bool gone =
      wait_until([&] { return h.wait_idle(10) && h.http().counters().open_connections <= 0; },
                 kSlowWait, 50ms);
  EXPECT_TRUE(gone) << "the stalled stream still holds its request or connection";
  auto m = h.loop().metrics();
  EXPECT_GE(failed(), 1u) << "ok=" << m.requests_total["ok"]
                          << " generated=" << m.generation_tokens_total;
  EXPECT_TRUE(health_ok(h));
}

// --max-tokens-limit defaults to the context, not a fixed 4096.
TEST(HostileLoad, MaxTokensLimitDefaultsToTheContext) {
  FixtureOptions o;
  o.sched.ctx = 256;
  ServerHarness h(o);
  auto r =
      h.client()->Post("/v1/completions", R"({"prompt":"a","max_tokens":300})", "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("256"), std::string::npos) << r->body;
  EXPECT_EQ(r->body.find("4096"), std::string::npos) << r->body;
}

}  // namespace
}  // namespace baton::server::testing
