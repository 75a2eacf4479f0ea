// `baton serve` under a memory limit: the KV pool is planned at start against what the limit
// leaves (ulimit -v, a cgroup's limit), so the server starts with the pool that fits and says so,
// answers, and refuses explicit settings that cannot fit with a one-line error naming the limit,
// before it loads the weights. Without the plan, a pool sized from ctx x parallel (327K tokens of
// 4 KB here) is zero-filled at start and the cgroup's OOM killer ends the server.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "support/free_port.h"
#include "support/shared_files.h"
#include "support/time_budget.h"

namespace baton::server::memory_testing {
namespace {

using namespace std::chrono_literals;

// A sanitizer build maps terabytes of shadow memory at start (no ulimit -v lets it run) and
// holds memory the plan does not know of: these tests measure the release binary.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BATON_REQUIRE_PLAIN_BINARY() \
  GTEST_SKIP() << "memory limits are tested on the release binary, not a sanitizer build"
#else
#define BATON_REQUIRE_PLAIN_BINARY() (void)0
#endif

struct Started {
  pid_t pid = -1;
  int port = 0;
  std::string log;  // stdout and stderr
};

using baton::testing::free_port;

std::string read_all(const std::string& path) {
  std::stringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

// A model with 4 KB of f16 KV per token (4 layers x 4 KV heads x 64 dims x K and V) and a
// trained context of 256K tokens; at --ctx 65536 x --parallel 4 the pool would want 1.25 GB.
std::string model_file() {
  const auto path = baton::testing::scratch_dir() / "mem.gguf";
  if (!std::filesystem::exists(path)) {
    const std::string cmd = baton::testing::baton_binary() + " gguf synth " + path.string() +
                            " --byte-vocab --embd 256 --layers 4 --heads 4 --kv-heads 4 "
                            "--head-dim 64 --ff 512 --ctx 262144 --threads 1 > /dev/null";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
  }
  return path.string();
}

// `prefix` runs before exec (a ulimit, joining a cgroup); returns once /health is 200 or the
// process exited (pid -1).
Started start(const std::string& prefix, const std::string& flags) {
  Started s;
  s.port = free_port();
  s.log = (baton::testing::scratch_dir() / fmt::format("serve-{}.log", s.port)).string();
  const std::string cmd =
      fmt::format("{}; exec {} serve -m {} --port {} --threads 1 --prefill-chunk 256 {} > {} 2>&1",
                  prefix, baton::testing::baton_binary(), model_file(), s.port, flags, s.log);
  s.pid = ::fork();
  if (s.pid == 0) {
    ::execl("/bin/bash", "bash", "-c", cmd.c_str(), nullptr);
    ::_exit(127);
  }
  httplib::Client c("127.0.0.1", s.port);
  const auto deadline = std::chrono::steady_clock::now() + baton::testing::kSlowWait;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    if (::waitpid(s.pid, &status, WNOHANG) == s.pid) {
      s.pid = -1;
      return s;
    }
    if (auto r = c.Get("/health"); r && r->status == 200) return s;
    std::this_thread::sleep_for(20ms);
  }
  ADD_FAILURE() << "baton serve neither became healthy nor exited:\n" << read_all(s.log);
  return s;
}

void stop(Started& s) {
  if (s.pid <= 0) return;
  ::kill(s.pid, SIGTERM);
  int status = 0;
  ::waitpid(s.pid, &status, 0);
  s.pid = -1;
}

// The pool's tokens from the plan's line, or -1.
long pool_tokens(const std::string& log) {
  std::smatch m;
  if (!std::regex_search(log, m, std::regex(R"(the pool holds (\d+) tokens)"))) return -1;
  return std::stol(m[1].str());
}

void expect_answers(const Started& s) {
  httplib::Client c("127.0.0.1", s.port);
  c.set_read_timeout(60, 0);
  const auto r = c.Post("/v1/completions", R"({"prompt":"once upon a time","max_tokens":8})",
                        "application/json");
  ASSERT_TRUE(r) << "no answer";
  EXPECT_EQ(r->status, 200) << r->body;
}

// What the limit leaves the server, measured: the address space a started server maps, plus
// room for about 600 MB of KV beyond the plan's slack.
uint64_t address_limit_kb() {
  Started probe = start("true", "--ctx 256 --parallel 1");
  EXPECT_GT(probe.pid, 0) << read_all(probe.log);
  std::ifstream status(fmt::format("/proc/{}/status", probe.pid));
  uint64_t vm_kb = 0;
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmSize:", 0) == 0) vm_kb = std::stoull(line.substr(7));
  }
  stop(probe);
  return vm_kb + (768 + 600) * 1024;
}

TEST(ServeMemory, UnderUlimitVThePoolFitsAndExplicitSettingsThatCannotAreRefused) {
  BATON_REQUIRE_BINARY();
  BATON_REQUIRE_PLAIN_BINARY();
  const std::string limit = fmt::format("ulimit -v {}", address_limit_kb());
  Started s = start(limit, "--parallel 4 --ctx 65536");
  ASSERT_GT(s.pid, 0) << "the server exited under " << limit << ":\n" << read_all(s.log);
  const std::string log = read_all(s.log);
  EXPECT_NE(log.find("memory plan: ulimit -v leaves"), std::string::npos) << log;
  const long tokens = pool_tokens(log);
  EXPECT_GT(tokens, 65536) << log;      // more than one full context
  EXPECT_LT(tokens, 4 * 65536) << log;  // less than ctx x parallel
  expect_answers(s);
  stop(s);

  Started refused = start(limit, "--kv-ram-mb 6000");
  EXPECT_EQ(refused.pid, -1);
  const std::string why = read_all(refused.log);
  EXPECT_NE(why.find("--kv-ram-mb 6000 does not fit"), std::string::npos) << why;
  EXPECT_NE(why.find("ulimit -v"), std::string::npos) << why;
  EXPECT_NE(why.find("give --kv-ram-mb"), std::string::npos) << why;
  EXPECT_EQ(why.find("loaded "), std::string::npos) << "refused after loading:\n" << why;
}

// A cgroup of its own with a memory limit (v1's memory controller or v2's), or "" when this
// machine lets the test make none.
std::string make_cgroup(uint64_t limit_bytes, std::string& procs) {
  const std::string name = fmt::format("baton-test-{}", ::getpid());
  for (const auto& [root, limit_file] :
       {std::pair{std::string("/sys/fs/cgroup/memory"), std::string("memory.limit_in_bytes")},
        std::pair{std::string("/sys/fs/cgroup"), std::string("memory.max")}}) {
    const std::string dir = root + "/" + name;
    if (::access(root.c_str(), W_OK) != 0) continue;
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) continue;
    std::ofstream(dir + "/" + limit_file) << limit_bytes;
    if (read_all(dir + "/" + limit_file).rfind(std::to_string(limit_bytes), 0) != 0) {
      ::rmdir(dir.c_str());
      continue;
    }
    // No swap to push the limit past: the limit is what the process may hold.
    std::ofstream(dir + "/memory.swappiness") << 0;
    procs = dir + "/cgroup.procs";
    return dir;
  }
  return "";
}

TEST(ServeMemory, InACgroupThePoolFitsItsLimitAndIsNotKilled) {
  BATON_REQUIRE_BINARY();
  BATON_REQUIRE_PLAIN_BINARY();
  const uint64_t limit = 2048ull << 20;
  std::string procs;
  const std::string dir = make_cgroup(limit, procs);
  if (dir.empty()) GTEST_SKIP() << "no cgroup memory controller this test may write to";
  const std::string join = "echo $$ > " + procs;
  Started s = start(join, "--parallel 4 --ctx 65536");
  const std::string log = read_all(s.log);
  ASSERT_GT(s.pid, 0) << "the server died in a cgroup of 2 GB:\n" << log;
  EXPECT_NE(log.find("memory plan: cgroup memory."), std::string::npos) << log;
  const long tokens = pool_tokens(log);
  EXPECT_GT(tokens, 65536) << log;
  EXPECT_LT(tokens, 4 * 65536) << log;
  EXPECT_LT(tokens * 4096, static_cast<long>(limit)) << log;
  expect_answers(s);
  expect_answers(s);
  stop(s);

  Started refused = start(join, "--kv-ram-mb 3000");
  EXPECT_EQ(refused.pid, -1);
  const std::string why = read_all(refused.log);
  EXPECT_NE(why.find("--kv-ram-mb 3000 does not fit"), std::string::npos) << why;
  EXPECT_NE(why.find("cgroup memory."), std::string::npos) << why;
  ::rmdir(dir.c_str());
}

}  // namespace
}  // namespace baton::server::memory_testing
