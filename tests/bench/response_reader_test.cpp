// The connections scenario's response reader, fed in pieces as a socket would deliver them.
#include "bench/response_reader.h"

#include <gtest/gtest.h>

namespace baton::bench {
namespace {

// Feeds `text` in pieces of `step` bytes, so markers and chunk sizes straddle the pieces.
ResponseReader feed(const std::string& text, std::size_t step) {
  ResponseReader r;
  for (std::size_t at = 0; at < text.size(); at += step) {
    EXPECT_TRUE(r.feed(std::string_view(text).substr(at, step))) << r.error();
  }
  return r;
}

std::string chunk(const std::string& s) {
  char size[16];
  std::snprintf(size, sizeof(size), "%zx\r\n", s.size());
  return size + s + "\r\n";
}

TEST(ResponseReader, CountsSseEventsInAChunkedStreamWhateverThePieces) {
  std::string text =
      "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n" +
      chunk(": keepalive\n\n") + chunk(": keepalive\n\n") + chunk("data: {\"x\":1}\n\n") +
      chunk("data: [DO") + chunk("NE]\n\n") + "0\r\n\r\n";
  for (std::size_t step : {1u, 3u, 7u, 4096u}) {
    auto r = feed(text, step);
    EXPECT_EQ(r.status(), 200) << step;
    EXPECT_TRUE(r.complete()) << step;
    EXPECT_EQ(r.keepalives(), 2) << step;
    EXPECT_EQ(r.done_events(), 1) << step;
  }
}

TEST(ResponseReader, MarkersCountOnlyAtTheStartOfALine) {
  auto r = feed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
                    chunk("data: {\"text\":\"x data: [DONE]\"}\n\n") + "0\r\n\r\n",
                5);
  EXPECT_EQ(r.done_events(), 0);
}

TEST(ResponseReader, ReadsALengthDelimitedRefusal) {
  std::string body = "{\"error\":{\"message\":\"busy\"}}";
  auto r =
      feed("HTTP/1.1 503 Service Unavailable\r\nContent-Length: " + std::to_string(body.size()) +
               "\r\n\r\n" + body,
           4);
  EXPECT_EQ(r.status(), 503);
  EXPECT_TRUE(r.complete());
}

TEST(ResponseReader, ABodyUntilCloseEndsAtEof) {
  auto r = feed("HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: [DONE]\n\n", 6);
  EXPECT_FALSE(r.complete());
  r.eof();
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(r.done_events(), 1);
}

TEST(ResponseReader, RejectsWhatIsNotHttp) {
  ResponseReader r;
  EXPECT_FALSE(r.feed("SSH-2.0-OpenSSH_9.2\r\n\r\n"));
  EXPECT_FALSE(r.error().empty());
}

}  // namespace
}  // namespace baton::bench
