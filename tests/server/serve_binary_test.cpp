// `baton serve` as a process: /health goes 503 → 200, it answers, and SIGINT/SIGTERM exit 0.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include "kv/disk_test_util.h"
#include "sse_client.h"
#include "support/free_port.h"
#include "support/shared_files.h"
#include "support/time_budget.h"

extern char** environ;

namespace baton::server::testing {
namespace {

using namespace std::chrono_literals;
using baton::testing::kExitSlack;
using baton::testing::kPromptWait;
using baton::testing::kSlowWait;
using baton::testing::wait_until;

// How long a signalled server may take to exit when nothing holds it (the default grace only
// applies to requests in progress), and how long one may take to start answering.
constexpr auto kExitWait = baton::testing::scaled(15s);
constexpr auto kStartWait = kSlowWait;

int ms(std::chrono::milliseconds d) {
  return static_cast<int>(d.count());
}

using baton::testing::free_port;

// Waits for the child to exit; returns its wait status, or -1 after the timeout (then kills it).
int wait_exit(pid_t pid, int timeout_ms) {
  int status = 0;
  for (int waited = 0; waited < timeout_ms; waited += 10) {
    if (::waitpid(pid, &status, WNOHANG) == pid) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return -1;
}

// Kills the server a test started when the test ends early (a failed assertion), so that it
// does not outlive the test run; one the test saw exit is left alone.
struct KillOnReturn {
  pid_t& pid;
  ~KillOnReturn() {
    int status = 0;
    if (pid > 0 && ::waitpid(pid, &status, WNOHANG) == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
  }
};

// Makes a synthetic model and starts `baton serve` on it; returns once /health answers 200.
// stdout_path: where its standard output goes ("" = inherited).
void spawn_server(int ctx, const std::vector<std::string>& extra, pid_t& pid, int& port,
                  const std::string& stdout_path = "") {
  auto dir = baton::testing::scratch_dir();
  std::string model = (dir / fmt::format("m{}.gguf", ctx)).string();
  std::string synth = baton::testing::baton_binary() + " gguf synth " + model +
                      " --byte-vocab --ctx " + std::to_string(ctx) + " --threads 1 > /dev/null";
  ASSERT_EQ(std::system(synth.c_str()), 0);
  port = free_port();
  std::string bin = baton::testing::baton_binary(), port_s = std::to_string(port);
  std::vector<std::string> args = {bin,    "serve",     "-m", model,     "--port",
                                   port_s, "--threads", "1",  "--alias", "tiny"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  if (!stdout_path.empty()) {
    ::posix_spawn_file_actions_addopen(&actions, 1, stdout_path.c_str(),
                                       O_WRONLY | O_CREAT | O_TRUNC, 0644);
  }
  const int rc = ::posix_spawn(&pid, bin.c_str(), &actions, nullptr, argv.data(), environ);
  ::posix_spawn_file_actions_destroy(&actions);
  ASSERT_EQ(rc, 0);
  httplib::Client c("127.0.0.1", port);
  const bool ready = wait_until(
      [&] {
        auto r = c.Get("/health");
        return r && r->status == 200;
      },
      kStartWait, 20ms);
  ASSERT_TRUE(ready) << "baton serve never became healthy";
}

void run_and_signal(int sig) {
  pid_t pid = 0;
  int port = 0;
  KillOnReturn cleanup{pid};
  spawn_server(256, {}, pid, port);
  if (::testing::Test::HasFatalFailure()) return;
  httplib::Client c("127.0.0.1", port);
  auto m = c.Get("/v1/models");
  ASSERT_TRUE(m);
  EXPECT_NE(m->body.find("\"tiny\""), std::string::npos);
  auto r = c.Post("/v1/completions", R"({"prompt":"hi","max_tokens":4,"model":"tiny"})",
                  "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << r->body;
  ::kill(pid, sig);
  int status = wait_exit(pid, ms(kExitWait));
  ASSERT_NE(status, -1) << "baton serve did not exit after the signal";
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// The generated-token count of the only running request; -1 when not exactly one runs.
int running_generated(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(ms(kPromptWait) / 1000);
  auto r = c.Get("/status");
  if (!r || r->status != 200) return -1;
  auto j = nlohmann::json::parse(r->body, nullptr, false);
  if (!j.is_object() || !j["running"].is_array() || j["running"].size() != 1) return -1;
  return j["running"][0].value("generated", -1);
}

// Waits until the only running request has stopped generating for a second while still
// running: its client does not read, the socket buffers are full and its events fill the
// channel (a write is pending in the server). Before that it makes ~1000 tokens a second.
bool wait_generation_paused(int port) {
  int last = -1, same = 0;
  return wait_until(
      [&] {
        const int now = running_generated(port);
        same = now > 0 && now == last ? same + 1 : 0;
        last = now;
        return same >= 4;
      },
      kSlowWait, 250ms);
}

// A client that stops reading cannot hold the process past --shutdown-grace-s (+1 s); a stream
// that finished before the signal was already complete, [DONE] included.
TEST(ServeBinary, StalledClientCannotDelayShutdown) {
  BATON_REQUIRE_BINARY();
  const auto grace = 1s, drain = 1s;
  pid_t pid = 0;
  int port = 0;
  KillOnReturn cleanup{pid};
  // The send-stall timeout far beyond every bound here: only the shutdown may end the stall.
  spawn_server(65536,
               {"--ctx", "65536", "--shutdown-grace-s", "1", "--parallel", "2",
                "--send-stall-timeout-ms", "600000"},
               pid, port);
  if (HasFatalFailure()) return;
  // A tiny receive window, and ~370 bytes of SSE per token (20 logprobs each): the loopback
  // socket buffers (a few MB at most) fill long before the stream ends.
  RawSocket stalled(port, 1024);
  ASSERT_TRUE(stalled.ok());
  stalled.post(
      "/v1/completions",
      R"({"prompt":"a","max_tokens":65000,"ignore_eos":true,"stream":true,"logprobs":20})");
  RawSocket done(port);
  done.post("/v1/completions", R"({"prompt":"a","max_tokens":5,"ignore_eos":true,"stream":true})");
  ASSERT_TRUE(done.read_until("data: [DONE]", ms(kPromptWait))) << done.received();
  EXPECT_NE(done.received().find("\"finish_reason\":\"length\""), std::string::npos);
  ASSERT_TRUE(wait_generation_paused(port))
      << "the stalled stream never paused: it finished or kept generating";
  auto start = std::chrono::steady_clock::now();
  ::kill(pid, SIGTERM);
  int status = wait_exit(pid, ms(kExitWait + grace + drain));
  auto took = std::chrono::steady_clock::now() - start;
  stalled.close();
  ASSERT_NE(status, -1) << "baton serve did not exit after SIGTERM";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_LT(took, grace + drain + kExitSlack)
      << "exit took " << std::chrono::duration<double>(took).count()
      << " s with --shutdown-grace-s 1";
}

TEST(ServeBinary, SigintExitsZero) {
  BATON_REQUIRE_BINARY();
  run_and_signal(SIGINT);
}
TEST(ServeBinary, SigtermExitsZero) {
  BATON_REQUIRE_BINARY();
  run_and_signal(SIGTERM);
}

// The line serve prints for a newcomer works when pasted into a shell.
TEST(ServeBinary, PrintsATryItCommandThatWorks) {
  BATON_REQUIRE_BINARY();
  if (std::system("command -v curl > /dev/null 2>&1") != 0) GTEST_SKIP() << "curl not installed";
  const std::string out = (baton::testing::scratch_dir() / "serve-stdout.txt").string();
  pid_t pid = 0;
  int port = 0;
  spawn_server(256, {}, pid, port, out);
  if (::testing::Test::HasFatalFailure()) return;
  std::string line;
  wait_until(
      [&] {
        std::ifstream in(out);
        for (std::string l; std::getline(in, l);) {
          if (l.rfind("try it: ", 0) == 0) line = l.substr(8);
        }
        return !line.empty();
      },
      kPromptWait, 20ms);
  const std::string answer = (baton::testing::scratch_dir() / "try-it.json").string();
  const int rc = line.empty() ? -1 : std::system((line + " > " + answer).c_str());
  ::kill(pid, SIGTERM);
  EXPECT_NE(wait_exit(pid, ms(kExitWait)), -1);
  ASSERT_FALSE(line.empty()) << "no 'try it:' line on stdout";
  EXPECT_NE(line.find(fmt::format("127.0.0.1:{}", port)), std::string::npos) << line;
  ASSERT_EQ(rc, 0) << line;
  std::stringstream body;
  body << std::ifstream(answer).rdbuf();
  EXPECT_NE(body.str().find("\"chat.completion\""), std::string::npos) << body.str();
  EXPECT_NE(body.str().find("\"model\":\"tiny\""), std::string::npos) << body.str();
}

// The KV disk tier through the binary: a conversation answered before a clean restart, and one
// answered and durably written before each of several kill -9s (which come at random moments
// while other segments are being written), is answered after them from disk, with the very
// answer of a server that computed it all.
std::string complete(int port, const std::string& prompt, int& cached) {
  httplib::Client c("127.0.0.1", port);
  c.set_read_timeout(60);
  const std::string body =
      fmt::format(R"({{"prompt":"{}","max_tokens":8,"temperature":0,"model":"tiny"}})", prompt);
  auto r = c.Post("/v1/completions", body, "application/json");
  if (!r || r->status != 200) return "HTTP error " + (r ? r->body : std::string("(none)"));
  auto j = nlohmann::json::parse(r->body);
  cached = j["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>();
  return j["choices"][0]["text"].get<std::string>();
}

std::string conversation(int i) {
  std::string p;
  for (int k = 0; p.size() < 300; ++k) p += fmt::format("turn {} line {} of the log; ", i, k);
  return p;
}

// A sample without labels in a /metrics text; -1 when absent.
double sample(const std::string& text, const std::string& name) {
  const std::string key = "\n" + name + " ";
  const size_t at = text.find(key);
  return at == std::string::npos ? -1 : std::stod(text.substr(at + key.size()));
}

double metric(int port, const std::string& name) {
  httplib::Client c("127.0.0.1", port);
  auto r = c.Get("/metrics");
  return r && r->status == 200 ? sample(r->body, name) : -1;
}

// Polls /metrics until, in one snapshot, no KV block is pinned (no request running, no disk save
// queued or being written: a save keeps its blocks pinned until its file and the directory are
// fsynced) and at least `min_saves` segments have been written. Returns the segments written, or
// -1 when that did not happen within a minute.
double wait_disk_quiet(int port, double min_saves) {
  httplib::Client c("127.0.0.1", port);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < until) {
    auto r = c.Get("/metrics");
    if (r && r->status == 200) {
      const double saves = sample(r->body, "baton_kv_disk_saves_total");
      if (sample(r->body, "baton_kv_cache_used_blocks") == 0 &&
          sample(r->body, "baton_requests_running") == 0 && saves >= min_saves) {
        return saves;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

// Asks conversation i of a server just started: it must come from disk (a disk hit, its prompt
// cached) with the answer `want`.
void expect_from_disk(int port, int i, const std::string& want) {
  SCOPED_TRACE("conversation " + std::to_string(i));
  const double hits = metric(port, "baton_kv_disk_hits_total");
  const double loaded = metric(port, "baton_kv_disk_loaded_tokens_total");
  int cached = 0;
  EXPECT_EQ(complete(port, conversation(i), cached), want);
  EXPECT_GE(cached, 256) << "its prompt should have come from disk";
  EXPECT_EQ(metric(port, "baton_kv_disk_hits_total"), hits + 1);
  EXPECT_GE(metric(port, "baton_kv_disk_loaded_tokens_total"), loaded + 256);
}

// The server process of a test: `stop` signals it and reaps it; one still running when a failed
// assertion leaves the test early is killed.
struct Server {
  pid_t pid = 0;
  int port = 0;
  ~Server() {
    if (pid > 0) stop(SIGKILL, 5000);
  }
  int stop(int sig, int timeout_ms) {
    ::kill(pid, sig);
    const int status = wait_exit(pid, timeout_ms);
    pid = 0;
    return status;
  }
};

TEST(ServeBinary, KvDiskTierAnswersFromDiskAfterRestartsAndKills) {
  BATON_REQUIRE_BINARY();
  constexpr int kRounds = 4;
  constexpr int kDurable = 3;  // conversations kDurable + r: written before kill r
  kv::testing::ScratchDir disk;
  const std::vector<std::string> flags = {"--kv-disk-dir", disk.path(), "--kv-disk-space-mb", "64"};
  Server s;
  int cached = 0;
  spawn_server(512, {}, s.pid, s.port);  // no disk tier: the reference answers
  if (::testing::Test::HasFatalFailure()) return;
  std::vector<std::string> want;
  for (int i = 0; i < kDurable + kRounds; ++i) {
    want.push_back(complete(s.port, conversation(i), cached));
  }
  s.stop(SIGKILL, 5000);

  spawn_server(512, flags, s.pid, s.port);
  if (::testing::Test::HasFatalFailure()) return;
  EXPECT_EQ(complete(s.port, conversation(0), cached), want[0]);
  // A clean restart: everything queued is written first.
  ASSERT_NE(s.stop(SIGTERM, 15000), -1);
  std::mt19937 rng(7);
  for (int round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    spawn_server(512, flags, s.pid, s.port);
    if (::testing::Test::HasFatalFailure()) return;
    // What the previous server wrote durably came through its kill -9.
    if (round > 0) expect_from_disk(s.port, kDurable + round - 1, want[kDurable + round - 1]);
    const double before = wait_disk_quiet(s.port, 0);
    ASSERT_GE(before, 0) << "the server never went quiet";
    EXPECT_EQ(complete(s.port, conversation(kDurable + round), cached), want[kDurable + round]);
    ASSERT_GE(wait_disk_quiet(s.port, before + 1), 0) << "its segments were never written";
    // Then a kill -9 at a random moment while another conversation's segments may be written.
    std::thread client([port = s.port, round] {
      int ignored = 0;
      complete(port, conversation(1 + round % 2), ignored);
    });
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 60)(rng)));
    s.stop(SIGKILL, 5000);
    client.join();
  }
  spawn_server(512, flags, s.pid, s.port);
  if (::testing::Test::HasFatalFailure()) return;
  expect_from_disk(s.port, 0, want[0]);  // written before the clean restart
  for (int round = 0; round < kRounds; ++round) {
    expect_from_disk(s.port, kDurable + round, want[kDurable + round]);  // before kill `round`
  }
  for (int i = 1; i < 3; ++i) EXPECT_EQ(complete(s.port, conversation(i), cached), want[i]);
  EXPECT_NE(s.stop(SIGTERM, 15000), -1);
}

TEST(ServeBinary, KvDiskFlagsAreCheckedWithTheFix) {
  BATON_REQUIRE_BINARY();
  const auto dir = baton::testing::scratch_dir();
  const std::string model = (dir / "m.gguf").string();
  const std::string bin = baton::testing::baton_binary();
  ASSERT_EQ(
      std::system((bin + " gguf synth " + model + " --byte-vocab --ctx 256 > /dev/null").c_str()),
      0);
  std::ofstream(dir / "a-file") << "x";
  auto run = [&](const std::string& flags) {
    const std::string out = (dir / "out.txt").string();
    const int rc = std::system(
        (bin + " serve -m " + model + " --port 0 " + flags + " > " + out + " 2>&1").c_str());
    std::stringstream text;
    text << std::ifstream(out).rdbuf();
    return std::make_pair(rc, text.str());
  };
  auto [rc1, out1] = run("--kv-disk-dir " + (dir / "kv").string());
  EXPECT_NE(rc1, 0);
  EXPECT_NE(out1.find("--kv-disk-space-mb"), std::string::npos) << out1;
  auto [rc2, out2] = run("--kv-disk-dir " + (dir / "a-file").string() + " --kv-disk-space-mb 8");
  EXPECT_NE(rc2, 0);
  EXPECT_NE(out2.find("cannot create the directory"), std::string::npos) << out2;
  auto [rc3, out3] =
      run("--kv-disk-dir " + (dir / "kv").string() + " --kv-disk-space-mb 999999999");
  EXPECT_NE(rc3, 0);
  EXPECT_NE(out3.find("lower --kv-disk-space-mb"), std::string::npos) << out3;
}

}  // namespace
}  // namespace baton::server::testing

namespace baton::server::testing {
namespace {

// The startup line states the latency target in force: by default a multiple of the decode
// step measured at start, `off` or a number when given; a value that is neither is refused.
TEST(ServeBinary, ItlTargetIsMeasuredAtStartAndStated) {
  BATON_REQUIRE_BINARY();
  const auto dir = baton::testing::scratch_dir();
  auto startup_line = [&](const std::vector<std::string>& flags) {
    const std::string out = (dir / "itl-stdout.txt").string();
    pid_t pid = 0;
    int port = 0;
    KillOnReturn cleanup{pid};
    spawn_server(256, flags, pid, port, out);
    std::string line;
    wait_until(
        [&] {
          std::ifstream in(out);
          for (std::string l; std::getline(in, l);) {
            if (l.rfind("batched mode:", 0) == 0) line = l;
          }
          return !line.empty();
        },
        kPromptWait, 20ms);
    ::kill(pid, SIGTERM);
    EXPECT_NE(wait_exit(pid, ms(kExitWait)), -1);
    return line;
  };
  const std::string by_default = startup_line({});
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(by_default, m, std::regex(R"(itl_target_ms=(\d+)\(2.8x_decode_step\))")))
      << by_default;
  EXPECT_GT(std::stoi(m[1].str()), 0);
  EXPECT_NE(startup_line({"--itl-target-ms", "off"}).find("itl_target_ms=off "), std::string::npos);
  EXPECT_NE(startup_line({"--itl-target-ms", "150"}).find("itl_target_ms=150 "), std::string::npos);
  EXPECT_TRUE(std::regex_search(startup_line({"--itl-target-ms", "2.5x"}),
                                std::regex(R"(itl_target_ms=\d+\(2.5x_decode_step\) )")));

  const std::string model = (dir / "m256.gguf").string();
  const std::string out = (dir / "bad-itl.txt").string();
  const int rc = std::system((baton::testing::baton_binary() + " serve -m " + model +
                              " --port 0 --itl-target-ms fast > " + out + " 2>&1")
                                 .c_str());
  std::stringstream text;
  text << std::ifstream(out).rdbuf();
  EXPECT_NE(rc, 0);
  EXPECT_NE(text.str().find("--itl-target-ms"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("auto or off"), std::string::npos) << text.str();
  for (const char* bad : {"0.5x", "x", "3xx", "-2x", "nanx"}) {
    const int bad_rc = std::system((baton::testing::baton_binary() + " serve -m " + model +
                                    " --port 0 --itl-target-ms " + bad + " > " + out + " 2>&1")
                                       .c_str());
    std::stringstream bad_text;
    bad_text << std::ifstream(out).rdbuf();
    EXPECT_NE(bad_rc, 0) << bad;
    EXPECT_NE(bad_text.str().find("e.g. 2.5x"), std::string::npos) << bad << ": " << bad_text.str();
  }
}

}  // namespace
}  // namespace baton::server::testing
