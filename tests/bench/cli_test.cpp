// `baton bench serve` through the real binary: help text, a clear error for an unreachable
// server, and a full run against the mock server writing its files.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>

#include "bench/mock_server.h"
#include "support/shared_files.h"

namespace baton::bench {
namespace {

struct Ran {
  int status = -1;
  std::string output;  // stdout and stderr together
};

Ran run_baton(const std::string& args) {
  Ran r;
  std::string cmd = "'" + baton::testing::baton_binary() + "' " + args + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;)
    r.output.append(buf.data(), n);
  int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

TEST(BenchServeCli, HelpListsScenariosAndKnobs) {
  BATON_REQUIRE_BINARY();
  auto r = run_baton("bench serve --help");
  EXPECT_EQ(r.status, 0) << r.output;
  for (const char* s : {"decode-under-prefill", "three-sessions", "hol-sequential", "agents",
                        "throughput", "--long-tokens", "--sessions", "--compare", "--timeout-s"}) {
    EXPECT_NE(r.output.find(s), std::string::npos) << s;
  }
}

TEST(BenchServeCli, UnreachableServerIsOneClearLine) {
  BATON_REQUIRE_BINARY();
  std::string url = "http://127.0.0.1:" + std::to_string(testing::closed_port());
  auto r = run_baton("bench serve --url " + url + " --scenario throughput");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("baton: error: cannot connect to " + url), std::string::npos) << r.output;
}

TEST(BenchServeCli, UnknownScenarioIsRejected) {
  BATON_REQUIRE_BINARY();
  auto r = run_baton("bench serve --url http://127.0.0.1:1 --scenario bogus");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.output.find("unknown --scenario 'bogus'"), std::string::npos) << r.output;
}

TEST(BenchServeCli, RunAgainstMockWritesFiles) {
  BATON_REQUIRE_BINARY();
  testing::MockServer srv;
  auto dir = baton::testing::scratch_dir();
  auto r = run_baton("bench serve --url " + srv.url() +
                     " --scenario decode-under-prefill --decode-tokens 20 --trigger-token 3 "
                     "--long-tokens 50 --short-delay-ms 5 --out '" +
                     dir.string() + "'");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("A worst gap while B prefills"), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::exists(dir / "decode-under-prefill.json"));
  EXPECT_TRUE(std::filesystem::exists(dir / "decode-under-prefill.svg"));
}

}  // namespace
}  // namespace baton::bench
