#include "bench/sse_parser.h"

#include <gtest/gtest.h>

namespace baton::bench {
namespace {

const std::string kStream =
    ": keepalive\r\n\r\n"
    "data: {\"a\":1}\r\n\r\n"
    "event: ping\ndata: line1\ndata: line2\n\n"
    "id: 7\nretry: 10\ndata:nospace\n\n"
    "data: [DONE]\n\n";

std::vector<SseEvent> feed_split(const std::string& s, std::size_t cut1, std::size_t cut2,
                                 SseParser& p) {
  std::vector<SseEvent> out;
  for (auto part : {s.substr(0, cut1), s.substr(cut1, cut2 - cut1), s.substr(cut2)}) {
    auto ev = p.feed(part);
    out.insert(out.end(), ev.begin(), ev.end());
  }
  auto tail = p.finish();
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

TEST(SseParser, WholeStream) {
  SseParser p;
  auto ev = feed_split(kStream, kStream.size(), kStream.size(), p);
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].data, "{\"a\":1}");
  EXPECT_EQ(ev[1].event, "ping");
  EXPECT_EQ(ev[1].data, "line1\nline2");
  EXPECT_EQ(ev[2].data, "nospace");
  EXPECT_TRUE(p.done());
  EXPECT_EQ(p.comments(), 1u);
}

TEST(SseParser, SameEventsAtEveryPairOfSplitPoints) {
  SseParser whole;
  auto expected = feed_split(kStream, kStream.size(), kStream.size(), whole);
  for (std::size_t a = 0; a <= kStream.size(); ++a) {
    for (std::size_t b = a; b <= kStream.size(); b += 3) {
      SseParser p;
      auto ev = feed_split(kStream, a, b, p);
      ASSERT_EQ(ev.size(), expected.size()) << "split at " << a << "," << b;
      for (std::size_t i = 0; i < ev.size(); ++i) {
        EXPECT_EQ(ev[i].data, expected[i].data) << "split at " << a << "," << b;
      }
      EXPECT_TRUE(p.done());
    }
  }
}

TEST(SseParser, ByteByByte) {
  SseParser p;
  std::vector<SseEvent> out;
  for (char c : kStream) {
    auto ev = p.feed(std::string(1, c));
    out.insert(out.end(), ev.begin(), ev.end());
  }
  EXPECT_EQ(out.size(), 3u);
  EXPECT_TRUE(p.done());
}

TEST(SseParser, UnterminatedLastEventCompletesOnFinish) {
  SseParser p;
  EXPECT_TRUE(p.feed("data: tail").empty());
  auto ev = p.finish();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, "tail");
  EXPECT_FALSE(p.done());
}

TEST(SseParser, BareCrLineEndingsAndCommentsOnly) {
  SseParser p;
  auto ev = p.feed(":c1\r:c2\rdata: x\r\r");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, "x");
  EXPECT_EQ(p.comments(), 2u);
}

TEST(SseParser, BlankLinesWithoutDataDispatchNothing) {
  SseParser p;
  EXPECT_TRUE(p.feed("\n\n\nevent: x\n\n").empty());
  EXPECT_TRUE(p.finish().empty());
}

}  // namespace
}  // namespace baton::bench
