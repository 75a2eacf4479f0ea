// Replays fuzz_http's seed corpus (fuzz/http_seeds.h) through the same request pipeline the
// fuzzer drives (fuzz/http_fuzz_app.h): every seed gets the answers it names, every answer keeps
// the fuzzer's invariants, and so do cheap deterministic mutations of the seeds. This runs in
// every test build (and under ASan+UBSan in scripts/test-sanitizers.sh) without clang.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "http_fuzz_app.h"
#include "http_seeds.h"

namespace baton::server::fuzzing {
namespace {

PipelineResult run(const std::string& bytes, bool eof = true) {
  static FuzzApp app;
  return run_request_pipeline(bytes, fuzz_limits(), app.app(), eof);
}

std::vector<int> statuses(const PipelineResult& r) {
  std::vector<int> out;
  for (const auto& x : r.responses) out.push_back(x.status);
  return out;
}

void expect_invariants(const PipelineResult& r, const std::string& context) {
  for (const auto& x : r.responses) {
    EXPECT_EQ(check_response(x), "") << context;
    if (x.status >= 400) {
      auto j = nlohmann::json::parse(x.body, nullptr, false);
      EXPECT_FALSE(j.is_discarded()) << context << ": " << x.body;
    }
  }
}

const HttpSeed& seed(const std::string& name) {
  static const auto all = [] {
    std::map<std::string, HttpSeed> m;
    for (auto& s : http_seeds()) m.emplace(s.name, std::move(s));
    return m;
  }();
  auto it = all.find(name);
  if (it == all.end()) throw std::runtime_error("no seed " + name);
  return it->second;
}

TEST(HttpPipelineCorpus, EverySeedGetsItsAnswers) {
  auto all = http_seeds();
  ASSERT_GT(all.size(), 50u);
  for (const auto& s : all) {
    PipelineResult r;
    ASSERT_NO_THROW(r = run(s.bytes)) << s.name;
    EXPECT_EQ(statuses(r), s.statuses)
        << s.name << ": " << (r.responses.empty() ? "" : r.responses[0].body);
    EXPECT_FALSE(r.incomplete) << s.name;
    expect_invariants(r, s.name);
  }
}

// The refusals a client relies on, with the machine-readable code of each.
TEST(HttpPipelineCorpus, HostileFramingGetsTheRightStatusAndCode) {
  const std::vector<std::tuple<std::string, int, std::string>> cases = {
      {"content-encoding-gzip", 415, "unsupported_content_encoding"},
      {"dup-content-length", 400, "duplicate_content_length"},
      {"long-url", 414, "uri_too_long"},
      {"longer-url-than-head", 414, "uri_too_long"},
      {"huge-header", 431, "headers_too_large"},
      {"no-length-post", 411, "length_required"},
      {"body-over-limit", 413, "body_too_large"},
      {"te-gzip", 501, "unsupported_transfer_encoding"},
      {"http2-version", 505, "http_version_not_supported"},
      {"no-key", 401, "invalid_api_key"},
      {"wrong-method", 405, "method_not_allowed"},
      {"chat", 503, "queue_full"},
      {"huge-token-array", 400, "context_length_exceeded"},
      {"prompt-too-long", 400, "context_length_exceeded"},
  };
  for (const auto& [name, status, code] : cases) {
    auto r = run(seed(name).bytes);
    ASSERT_EQ(r.responses.size(), 1u) << name;
    EXPECT_EQ(r.responses[0].status, status) << name;
    EXPECT_TRUE(r.responses[0].closes || status < 500 || status == 503) << name;
    auto j = nlohmann::json::parse(r.responses[0].body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << name;
    EXPECT_EQ(j["error"]["code"], code) << name << ": " << r.responses[0].body;
  }
}

// A framing error closes the connection: what follows it is never run as a request.
TEST(HttpPipelineCorpus, FramingErrorsCloseAndKeepAliveContinues) {
  auto r = run(seed("refused-then-smuggled").bytes);
  ASSERT_EQ(r.responses.size(), 1u);
  EXPECT_TRUE(r.responses[0].closes);
  r = run(seed("pipelined-posts").bytes);
  ASSERT_EQ(r.responses.size(), 2u);
  EXPECT_FALSE(r.responses[0].closes);
}

TEST(HttpPipelineCorpus, APartialRequestWaitsUnlessTheClientCloses) {
  std::string partial = "GET /health HTTP/1.1\r\nHost: x\r\n";
  auto waiting = run(partial, false);
  EXPECT_TRUE(waiting.incomplete);
  EXPECT_TRUE(waiting.responses.empty());
  auto closed = run(partial, true);
  EXPECT_EQ(statuses(closed), std::vector<int>{400});

  auto first_then_partial = run(seed("health").bytes + "POST /tokenize HTTP/1.1\r\n", false);
  EXPECT_EQ(statuses(first_then_partial), std::vector<int>{200});
  EXPECT_TRUE(first_then_partial.incomplete);
  EXPECT_TRUE(run("", false).responses.empty());
}

// A few thousand cheap mutations (truncations, byte flips, an invalid UTF-8 byte, a doubled
// span) of every small seed: whatever comes out must keep the invariants.
TEST(HttpPipelineCorpus, MutatedSeedsKeepTheInvariants) {
  size_t runs = 0;
  for (const auto& s : http_seeds()) {
    const std::string& b = s.bytes;
    if (b.size() > 4096) continue;
    size_t step = std::max<size_t>(1, b.size() / 24);
    for (size_t i = 0; i < b.size(); i += step) {
      std::vector<std::string> variants = {b.substr(0, i), b, b, b};
      variants[1][i] = static_cast<char>(variants[1][i] ^ 0x20);
      variants[2][i] = '\xff';
      variants[3].insert(i, b.substr(i, step));
      for (const auto& v : variants) {
        std::string context = s.name + " mutated at " + std::to_string(i);
        PipelineResult r;
        ASSERT_NO_THROW(r = run(v)) << context;
        expect_invariants(r, context);
        ++runs;
      }
    }
  }
  EXPECT_GT(runs, 1000u);
}

}  // namespace
}  // namespace baton::server::fuzzing
