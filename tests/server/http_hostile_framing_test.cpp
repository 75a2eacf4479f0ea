// A hostile client on raw sockets, one request at a time: whatever bytes it sends, it gets a 4xx
// with an OpenAI-style JSON body (never a crash), one parse per request (a framing error
// answers and closes, so leftover bytes never run as a second request), no body read before
// the API key is checked, and no decompression.
#include <gtest/gtest.h>

#include <thread>

#include "server_fixture.h"
#include "sse_client.h"

namespace baton::server::testing {
namespace {

// The status code of the first response in `raw`, or 0.
int status_of(const std::string& raw) {
  if (raw.rfind("HTTP/1.", 0) != 0 || raw.size() < 12) return 0;
  return std::atoi(raw.substr(9, 3).c_str());
}

std::string body_of(const std::string& raw) {
  size_t p = raw.find("\r\n\r\n");
  return p == std::string::npos ? "" : raw.substr(p + 4);
}

// Sends `request` on a fresh connection, reads until the server closes it.
std::string exchange(int port, const std::string& request, int timeout_ms = 5000) {
  RawSocket s(port);
  s.send_all(request);
  s.wait_closed(timeout_ms);
  return s.received();
}

void expect_alive(const ServerHarness& h) {
  auto r = h.client()->Get("/health");
  ASSERT_TRUE(r) << "the server no longer answers";
  EXPECT_EQ(r->status, 200);
}

TEST(Hostile, InvalidUtf8AnywhereInTheHeadGetsA4xx) {
  ServerHarness h;
  const std::vector<std::string> targets = {"/%ff",         "/v1/models%c3",     "/\xff",
                                            "/v1/\xc3\x28", "/v1/models/%ff%fe", "/%c3/health"};
  for (const char* method : {"GET", "POST", "DELETE", "PUT", "FOO"}) {
    for (const auto& t : targets) {
      std::string raw = exchange(
          h.port(), std::string(method) + " " + t +
                        " HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      int st = status_of(raw);
      EXPECT_GE(st, 400) << method << " " << t << ": " << raw;
      EXPECT_LT(st, 500) << method << " " << t << ": " << raw;
      expect_error_shape(body_of(raw), std::string(method) + " " + t);
    }
  }
  std::string raw = exchange(h.port(),
                             "GET /health?x=%ff HTTP/1.1\r\nHost: \xff\xfe\r\n"
                             "X-A: \x80\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(status_of(raw), 200) << raw;
  expect_alive(h);
}

TEST(Hostile, GarbageRequestLinesAnswerAndClose) {
  ServerHarness h;
  for (std::string junk :
       {std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11), std::string("GET\r\n\r\n"),
        std::string("GET / HTTP/9.9\r\n\r\n"), std::string(" / HTTP/1.1\r\n\r\n"),
        std::string("\r\n\r\n\r\n"), std::string("GET /health HTTP/1.1\r\nNoColon\r\n\r\n")}) {
    RawSocket s(h.port());
    s.send_all(junk);
    EXPECT_TRUE(s.wait_closed(5000)) << "connection left open after: " << junk;
    if (!s.received().empty()) {
      EXPECT_GE(status_of(s.received()), 400) << s.received();
      expect_error_shape(body_of(s.received()), "junk");
    }
  }
  expect_alive(h);
}

// After an error on a request's framing, what follows on the connection is never run.
TEST(Hostile, NoRequestSmugglingAfterAFramingError) {
  ServerHarness h;
  const std::string next = "GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::vector<std::pair<std::string, int>> cases = {
      {"FOO /health HTTP/1.1\r\nHost: x\r\n\r\n", 405},
      {"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(70000, 'a') + "\r\n\r\n", 431},
      {"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n"
       "{\"a\"}",
       400},
      {"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"
       "{\"a\"}",
       400},
      {"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: "
       "chunked\r\n\r\n0\r\n\r\n",
       400},
      {"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400},
      {"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n", 400},
      {"POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n",
       400},
      {"POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
      {"POST /v1/completions HTTP/1.1\r\nHost: x\r\n\r\n", 411},
  };
  for (const auto& [req, want] : cases) {
    std::string raw = exchange(h.port(), req + next);
    EXPECT_EQ(status_of(raw), want) << req.substr(0, 120) << "\n→ " << raw.substr(0, 300);
    EXPECT_EQ(raw.find("\"object\":\"list\""), std::string::npos)
        << "the smuggled request ran after: " << req.substr(0, 120);
    expect_error_shape(body_of(raw), req.substr(0, 40));
  }
  expect_alive(h);
}

TEST(Hostile, CompressedBodiesAreRefusedUnread) {
  ServerHarness h;
  RawSocket s(h.port());
  // Declares a large gzip body and sends none of it: the answer must not wait for it.
  s.send_all(
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\n"
      "Content-Length: 500000\r\n\r\n");
  ASSERT_TRUE(s.read_until("\r\n\r\n", 2000)) << "no prompt answer to a gzip body";
  EXPECT_EQ(status_of(s.received()), 415) << s.received();
  EXPECT_TRUE(s.wait_closed(3000));
  expect_alive(h);
}

TEST(Hostile, ApiKeyIsCheckedBeforeTheBody) {
  FixtureOptions o;
  o.server.api_key = "s3cret";
  ServerHarness h(o);
  RawSocket s(h.port());
  s.send_all("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 8000000\r\n\r\n");
  ASSERT_TRUE(s.read_until("\r\n\r\n", 2000)) << "the server waited for the body";
  EXPECT_EQ(status_of(s.received()), 401) << s.received();

  auto c = h.client();
  for (const char* scheme : {"Bearer", "bearer", "BEARER"}) {
    httplib::Headers hd = {{"Authorization", std::string(scheme) + " s3cret"}};
    auto r = c->Get("/v1/models", hd);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << scheme;
  }
  for (const char* wrong : {"Bearer s3cre", "Bearer s3cret2", "Basic s3cret", "Bearers3cret"}) {
    auto r = c->Get("/v1/models", {{"Authorization", wrong}});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401) << wrong;
  }
}

TEST(Hostile, LongUrlsGet414) {
  ServerHarness h;
  for (size_t n : {9000u, 70000u, 300000u}) {
    std::string raw =
        exchange(h.port(), "GET /" + std::string(n, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(status_of(raw), 414) << n;
    expect_error_shape(body_of(raw), "long url");
  }
  expect_alive(h);
}

TEST(Hostile, OversizedChunkedBodyGets413) {
  FixtureOptions o;
  o.server.max_body_mb = 1;
  ServerHarness h(o);
  RawSocket s(h.port());
  s.send_all("POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
  std::string chunk(64 * 1024, 'a');
  char hex[16];
  std::snprintf(hex, sizeof(hex), "%zx\r\n", chunk.size());
  for (int i = 0; i < 40 && s.send_all(hex + chunk + "\r\n"); ++i) {
  }
  s.wait_closed(5000);
  EXPECT_EQ(status_of(s.received()), 413) << s.received().substr(0, 200);
  expect_alive(h);
}

TEST(Hostile, Http10GetsACloseDelimitedStream) {
  ServerHarness h;
  RawSocket s(h.port());
  std::string body = R"({"prompt":"abc","max_tokens":5,"stream":true})";
  s.send_all("POST /v1/completions HTTP/1.0\r\nContent-Type: application/json\r\nContent-Length: " +
             std::to_string(body.size()) + "\r\n\r\n" + body);
  ASSERT_TRUE(s.wait_closed(5000)) << "an HTTP/1.0 stream must end by closing";
  const std::string& raw = s.received();
  EXPECT_EQ(raw.rfind("HTTP/1.0 200", 0), 0u) << raw;
  EXPECT_EQ(raw.find("chunked"), std::string::npos) << raw;
  EXPECT_NE(raw.find("data: [DONE]\n\n"), std::string::npos) << raw;
  EXPECT_EQ(sse_events(body_of(raw)).back().substr(0, 12), "data: [DONE]");

  RawSocket plain(h.port());
  plain.send_all("GET /health HTTP/1.0\r\n\r\n");
  ASSERT_TRUE(plain.wait_closed(5000));
  EXPECT_EQ(plain.received().rfind("HTTP/1.0 200", 0), 0u) << plain.received();
  EXPECT_NE(plain.received().find("Content-Length:"), std::string::npos);
}

TEST(Hostile, ExpectContinueIsAnswered) {
  ServerHarness h;
  RawSocket s(h.port());
  std::string body = R"({"prompt":"abc","max_tokens":2})";
  s.send_all(
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n");
  ASSERT_TRUE(s.read_until("100 Continue", 2000)) << s.received();
  s.send_all(body);
  ASSERT_TRUE(s.read_until("\"finish_reason\"", 5000)) << s.received();
  EXPECT_NE(s.received().find("HTTP/1.1 200"), std::string::npos);
}

TEST(Hostile, PipelinedRequestsAreAnsweredInOrder) {
  ServerHarness h;
  RawSocket s(h.port());
  s.send_all(
      "GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n"
      "GET /v1/models/fake-model HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  ASSERT_TRUE(s.wait_closed(5000));
  const std::string& raw = s.received();
  size_t a = raw.find("\"status\":\"ok\""), b = raw.find("\"object\":\"list\""),
         c = raw.rfind("\"id\":\"fake-model\"");
  ASSERT_NE(a, std::string::npos) << raw;
  ASSERT_NE(b, std::string::npos) << raw;
  ASSERT_NE(c, std::string::npos) << raw;
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
}

TEST(Hostile, ModelById) {
  ServerHarness h;
  auto c = h.client();
  auto r = c->Get("/v1/models/fake-model");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(parse(r->body)["id"], "fake-model");
  EXPECT_EQ(parse(r->body)["object"], "model");
  r = c->Get("/v1/models/fake%2Dmodel");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  r = c->Get("/v1/models/gpt-4");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  expect_error_shape(r->body, "unknown model id");
  EXPECT_EQ(parse(r->body)["error"]["code"], "model_not_found");
}

}  // namespace
}  // namespace baton::server::testing

namespace baton::server::testing {
namespace {

// One keep-alive connection carries request after request, streamed or not, with pauses
// between them (each answer must be written without waiting for the next request).
TEST(Hostile, KeepAliveConnectionServesManyRequests) {
  ServerHarness h;
  RawSocket s(h.port());
  for (int i = 0; i < 40; ++i) {
    bool stream = i % 3 == 2;
    std::string body = std::string(R"({"prompt":"abc","max_tokens":4,"stream":)") +
                       (stream ? "true" : "false") + "}";
    s.post("/v1/completions", body);
    const char* end = stream ? "data: [DONE]" : "\"total_tokens\"";
    ASSERT_TRUE(s.read_until(end, 3000)) << "request " << i << " got no answer";
    s.clear();
    std::this_thread::sleep_for(std::chrono::milliseconds(i % 2 ? 30 : 0));
  }
}

}  // namespace
}  // namespace baton::server::testing
