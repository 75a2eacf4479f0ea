// Clients that hang up (queued, prefilling, decoding; streaming or not) cancel their request and
// free everything it held; keepalive comments flow while a stream waits.
#include <gtest/gtest.h>

#include <thread>

#include "server_fixture.h"
#include "sse_client.h"

namespace baton::server::testing {
namespace {

using sched::RequestState;

uint64_t cancelled(ServerHarness& h) {
  auto m = h.loop().metrics();
  auto it = m.requests_total.find("cancelled");
  return it == m.requests_total.end() ? 0 : it->second;
}

// Waits until some request is in `state`; returns whether it happened.
bool wait_state(ServerHarness& h, RequestState state, size_t count = 1) {
  for (int i = 0; i < 2000; ++i) {
    size_t n = 0;
    for (const auto& r : h.loop().status().requests) n += r.state == state;
    if (n >= count) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

std::string long_request(bool stream, int prompt_len = 4, int max_tokens = 3000) {
  return R"({"prompt":")" + std::string(prompt_len, 'p') + R"(","max_tokens":)" +
         std::to_string(max_tokens) + R"(,"ignore_eos":true,"stream":)" +
         (stream ? "true" : "false") + "}";
}

FixtureOptions slow_options() {
  FixtureOptions o;
  o.sched.parallel = 1;
  o.sched.prefill_chunk = 16;
  o.sched.mixed_prefill_chunk = 16;
  o.engine.sleep_us_per_step = 3000;
  return o;
}

void expect_freed(ServerHarness& h, uint64_t cancelled_before, uint64_t n_cancelled) {
  // The status snapshot can read idle before the loop has seen the hang-up (it is published at
  // step boundaries), so first wait for the cancellations themselves.
  for (int i = 0; i < 2500 && cancelled(h) < cancelled_before + n_cancelled; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_TRUE(h.wait_idle()) << "requests or KV blocks still held";
  EXPECT_EQ(cancelled(h), cancelled_before + n_cancelled);
  auto s = h.client()->Get("/status");
  ASSERT_TRUE(s);
  auto j = parse(s->body);
  EXPECT_TRUE(j["running"].empty()) << s->body;
  EXPECT_TRUE(j["waiting"].empty()) << s->body;
  EXPECT_EQ(j["kv"]["blocks_used"], 0);
  auto m = h.client()->Get("/metrics");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("baton_requests_total{status=\"cancelled\"} " +
                         std::to_string(cancelled_before + n_cancelled)),
            std::string::npos);
}

TEST(Disconnect, WhileQueued) {
  ServerHarness h(slow_options());
  uint64_t before = cancelled(h);
  RawSocket running(h.port()), queued(h.port());
  running.post(kText, long_request(true));
  ASSERT_TRUE(running.read_until("data: {"));
  queued.post(kText, long_request(true));
  // One snapshot must show both: an older one can show the running request still queued.
  auto both_there = [&] {
    const auto rs = h.loop().status().requests;
    return rs.size() == 2 &&
           (rs[0].state == RequestState::Queued) + (rs[1].state == RequestState::Queued) == 1;
  };
  for (int i = 0; i < 5000 && !both_there(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE(both_there());
  queued.close();
  // The queued one goes while the running one keeps going.
  auto only_running = [&] {
    const auto rs = h.loop().status().requests;
    return rs.size() == 1 && rs[0].state != RequestState::Queued;
  };
  for (int i = 0; i < 5000 && !only_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE(only_running());
  running.close();
  expect_freed(h, before, 2);
}

TEST(Disconnect, WhilePrefilling) {
  ServerHarness h(slow_options());
  uint64_t before = cancelled(h);
  RawSocket s(h.port());
  s.post(kText, long_request(true, 3000, 500));  // 3000 tokens in chunks of 16: many slow steps
  ASSERT_TRUE(wait_state(h, RequestState::Prefilling));
  s.close();
  expect_freed(h, before, 1);
}

TEST(Disconnect, WhileDecodingStream) {
  ServerHarness h(slow_options());
  uint64_t before = cancelled(h);
  RawSocket s(h.port());
  s.post(kText, long_request(true));
  ASSERT_TRUE(s.read_until("data: {"));
  s.close();
  expect_freed(h, before, 1);
}

TEST(Disconnect, WhileDecodingNonStreaming) {
  ServerHarness h(slow_options());
  uint64_t before = cancelled(h);
  RawSocket s(h.port());
  s.post(kText, long_request(false));
  ASSERT_TRUE(wait_state(h, RequestState::Decoding));
  s.close();
  expect_freed(h, before, 1);
}

TEST(Disconnect, NonStreamingWhileQueued) {
  ServerHarness h(slow_options());
  uint64_t before = cancelled(h);
  RawSocket running(h.port()), queued(h.port());
  running.post(kText, long_request(true));
  ASSERT_TRUE(running.read_until("data: {"));
  queued.post(kText, long_request(false));
  ASSERT_TRUE(wait_state(h, RequestState::Queued));
  queued.close();
  running.close();
  expect_freed(h, before, 2);
}

// A client that sends a byte of a next request and then hangs up, while its non-streamed answer
// (which writes nothing until it ends) is generated: the byte is kept for the next request and
// the close is still seen.
TEST(Disconnect, NonStreamingAfterAPipelinedByte) {
  ServerHarness h(slow_options());
  uint64_t before = cancelled(h);
  RawSocket s(h.port());
  s.post(kText, long_request(false));
  ASSERT_TRUE(wait_state(h, RequestState::Decoding));
  ASSERT_TRUE(s.send_all("G"));
  s.close();
  expect_freed(h, before, 1);
}

std::string completion_request(const std::string& body) {
  return "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
         "Content-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

// More pipelined bytes than the server reads ahead while answering (256 KB): it then watches
// for the close without reading them. (The close can only arrive once the bytes before it fit
// the server's receive window, so only a few KB go past the read-ahead.)
TEST(Disconnect, NonStreamingAfterALargePipelinedRequest) {
  ServerHarness h(slow_options());
  uint64_t before = cancelled(h);
  RawSocket s(h.port());
  s.post(kText, long_request(false));
  ASSERT_TRUE(wait_state(h, RequestState::Decoding));
  const std::string pad((256 + 8) << 10, 'p');
  ASSERT_TRUE(
      s.send_all(completion_request(R"({"prompt":"q","max_tokens":2,"pad":")" + pad + R"("})")));
  s.close();
  expect_freed(h, before, 1);
}

// Requests pipelined while a non-streamed answer is generated, small and past the read-ahead,
// are answered after it, in order.
TEST(Disconnect, RequestsPipelinedDuringAnAnswerAreServed) {
  ServerHarness h(slow_options());
  uint64_t before = cancelled(h);
  RawSocket s(h.port());
  s.post(kText, long_request(false, 4, 60));
  ASSERT_TRUE(wait_state(h, RequestState::Decoding));
  const std::string pad(400 << 10, 'p');
  ASSERT_TRUE(
      s.send_all(completion_request(R"({"prompt":"zqzq","echo":true,"max_tokens":2})") +
                 completion_request(R"({"prompt":"wvwv","echo":true,"max_tokens":2,"pad":")" + pad +
                                    R"("})")));
  ASSERT_TRUE(s.read_until("wvwv")) << s.received();
  const std::string& got = s.received();
  const size_t second = got.find("zqzq");
  ASSERT_NE(second, std::string::npos) << got;
  EXPECT_LT(second, got.find("wvwv"));
  size_t ok = 0;
  for (size_t at = got.find("HTTP/1.1 200"); at != std::string::npos;
       at = got.find("HTTP/1.1 200", at + 1)) {
    ++ok;
  }
  EXPECT_EQ(ok, 3u) << got;
  EXPECT_EQ(cancelled(h), before);
}

TEST(Stream, KeepaliveCommentsWhileQueued) {
  FixtureOptions o = slow_options();
  o.server.keepalive_s = 0.05;
  ServerHarness h(o);
  RawSocket running(h.port());
  running.post(kText, R"({"prompt":"a","max_tokens":60,"ignore_eos":true,"stream":true})");
  ASSERT_TRUE(running.read_until("data: {"));
  RawSocket waiting(h.port());
  waiting.post(kText, R"({"prompt":"b","max_tokens":3,"ignore_eos":true,"stream":true})");
  ASSERT_TRUE(waiting.read_until("data: [DONE]"));
  const std::string& got = waiting.received();
  size_t keepalive = got.find(": keepalive\n\n");
  size_t first_data = got.find("data: {");
  ASSERT_NE(keepalive, std::string::npos) << got;
  EXPECT_LT(keepalive, first_data);
  EXPECT_TRUE(running.read_until("data: [DONE]"));
  EXPECT_TRUE(h.wait_idle());
}

}  // namespace
}  // namespace baton::server::testing
