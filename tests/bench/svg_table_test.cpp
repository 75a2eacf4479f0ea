#include <gtest/gtest.h>

#include <regex>
#include <stack>

#include "bench/report_table.h"
#include "bench/svg_timeline.h"

namespace baton::bench {
namespace {

// A small well-formedness check: tags nest and close, attributes are quoted, entities are known.
// Returns an empty string when the document is well-formed, else what is wrong.
std::string xml_problem(const std::string& doc) {
  std::stack<std::string> open;
  std::size_t i = 0;
  static const std::regex attr(R"(^\s*([A-Za-z_:][-\w:.]*)\s*=\s*"([^"<]*)\"\s*)");
  while ((i = doc.find_first_of("<&", i)) != std::string::npos) {
    if (doc[i] == '&') {
      auto semi = doc.find(';', i);
      std::string ent = semi == std::string::npos ? "" : doc.substr(i, semi - i + 1);
      if (ent != "&amp;" && ent != "&lt;" && ent != "&gt;" && ent != "&quot;" && ent != "&apos;")
        return "bad entity at " + std::to_string(i);
      i = semi;
      continue;
    }
    auto close = doc.find('>', i);
    if (close == std::string::npos) return "unclosed tag at " + std::to_string(i);
    std::string tag = doc.substr(i + 1, close - i - 1);
    i = close + 1;
    if (tag.starts_with("?")) continue;
    if (tag.starts_with("/")) {
      if (open.empty() || open.top() != tag.substr(1)) return "mismatched </" + tag.substr(1) + ">";
      open.pop();
      continue;
    }
    bool self = tag.ends_with("/");
    if (self) tag.pop_back();
    auto name_end = tag.find_first_of(" \n\t");
    std::string name = tag.substr(0, name_end);
    std::string rest = name_end == std::string::npos ? "" : tag.substr(name_end);
    std::smatch m;
    while (!rest.empty() && rest.find_first_not_of(" \n\t") != std::string::npos) {
      if (!std::regex_search(rest, m, attr)) return "bad attributes in <" + name + ">: " + rest;
      rest = m.suffix();
    }
    if (!self) open.push(name);
  }
  return open.empty() ? "" : "unclosed <" + open.top() + ">";
}

std::size_t count(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

ScenarioResult sample_result() {
  ScenarioResult r;
  r.scenario = std::string("decode-under-prefill");
  r.server_url = std::string("http://127.0.0.1:1/<odd & url>");
  r.model = std::string("m");
  r.wall_ms = 2000;
  RequestRecord a;
  a.label = std::string("A <decode>");
  a.send_ms = 0;
  a.first_byte_ms = 10;
  a.first_token_ms = 50;
  for (int i = 0; i < 20; ++i) a.token_ms.push_back(50 + 10 * i + (i >= 10 ? 500 : 0));
  a.end_ms = a.token_ms.back() + 1;
  RequestRecord b;
  b.label = std::string("B long");
  b.send_ms = 120;
  b.errors = {"server returned HTTP 500"};
  b.end_ms = 130;
  r.requests = {a, b};
  r.figures = {{"B TTFT", 123.4, "ms"}, {"missing", std::nan(""), "ms"}};
  r.notes = {"a note"};
  return r;
}

TEST(XmlCheck, CatchesBrokenDocuments) {
  EXPECT_EQ(xml_problem("<a x=\"1\"><b/></a>"), "");
  EXPECT_NE(xml_problem("<a><b></a>"), "");
  EXPECT_NE(xml_problem("<a x=1></a>"), "");
  EXPECT_NE(xml_problem("<a>&</a>"), "");
}

TEST(Svg, WellFormedWithOneLanePerRequestAndRedGaps) {
  auto r = sample_result();
  std::string svg = render_svg(r);
  EXPECT_EQ(xml_problem(svg), "") << svg.substr(0, 400);
  EXPECT_EQ(count(svg, "<g class=\"lane\""), 2u);
  EXPECT_EQ(count(svg, "class=\"gap\""), 1u);  // the 510 ms stall among 10 ms gaps
  EXPECT_EQ(count(svg, "class=\"tick\""), 20u);
  EXPECT_NE(svg.find("decode-under-prefill"), std::string::npos);
  EXPECT_NE(svg.find("&lt;odd &amp; url&gt;"), std::string::npos);
  EXPECT_NE(svg.find("(error)"), std::string::npos);
  EXPECT_NE(svg.find("seconds"), std::string::npos);
  EXPECT_NE(svg.find("class=\"legend\""), std::string::npos);
}

TEST(Svg, EmptyRunStillWellFormed) {
  ScenarioResult r;
  r.scenario = std::string("throughput");
  EXPECT_EQ(xml_problem(render_svg(r)), "");
}

TEST(Svg, NoRedGapsOnASteadyStream) {
  auto r = sample_result();
  r.requests[0].token_ms = {0, 10, 20, 30, 40, 50};
  EXPECT_EQ(count(render_svg(r), "class=\"gap\""), 0u);
}

TEST(Table, ShowsRequestsOverallHeadlineErrorsAndNotes) {
  std::string t = render_table(sample_result());
  EXPECT_NE(t.find("A <decode>"), std::string::npos);
  EXPECT_NE(t.find("p99 gap"), std::string::npos);
  EXPECT_NE(t.find("overall"), std::string::npos);
  EXPECT_NE(t.find("B TTFT"), std::string::npos);
  EXPECT_NE(t.find("123"), std::string::npos);
  EXPECT_NE(t.find("error: B long: server returned HTTP 500"), std::string::npos);
  EXPECT_NE(t.find("note: a note"), std::string::npos);
  EXPECT_NE(t.find("510"), std::string::npos);  // A's max gap
}

TEST(Table, ComparisonShowsRatios) {
  auto a = sample_result(), b = sample_result();
  b.server_url = std::string("http://other");
  b.figures[0].value = 246.8;
  std::string t = render_comparison({a, b});
  EXPECT_NE(t.find("http://other"), std::string::npos);
  EXPECT_NE(t.find("2.00x"), std::string::npos);
  EXPECT_NE(t.find("1.00x"), std::string::npos);
}

// A second server whose run broke off after request A: B's row shows nothing for it, and its
// overall figures stay on their own rows instead of sliding up into B's.
TEST(Table, ComparisonMatchesRowsByNameWhenAServerHasFewerRequests) {
  auto a = sample_result(), b = sample_result();
  b.requests.pop_back();
  const std::string t = render_comparison({a, b});
  auto row = [&](const std::string& name) {
    const auto at = t.find(name);
    return at == std::string::npos ? std::string() : t.substr(at, t.find('\n', at) - at);
  };
  EXPECT_NE(row("B long TTFT").find(" - "), std::string::npos) << t;
  EXPECT_NE(row("max gap (all)").find("510"), std::string::npos) << t;
  EXPECT_EQ(row("max gap (all)").find(" - "), std::string::npos) << t;
  EXPECT_NE(row("max gap (all)").find("1.00x"), std::string::npos) << t;
}

TEST(Table, FormatsMissingValuesAsDash) {
  EXPECT_EQ(fmt_ms(std::nan("")), "-");
  EXPECT_EQ(fmt_ms(-1), "-");
  EXPECT_EQ(fmt_ms(12.34), "12.3");
  EXPECT_EQ(fmt_ms(1234.5), "1234");
}

}  // namespace
}  // namespace baton::bench
