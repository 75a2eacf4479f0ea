// `baton pull`, `baton models` and `baton serve -m hf:...` run as processes against the fake hub.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <fstream>
#include <sstream>
#include <thread>

#include "pull/fake_hub.h"
#include "support/free_port.h"
#include "support/read_file.h"
#include "support/run_baton.h"
#include "support/shared_files.h"

extern char** environ;

namespace baton::pull {
namespace {

using testing::FakeHub;
using testing::gguf_bytes;
namespace fs = std::filesystem;

using baton::testing::free_port;

class PullCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = baton::testing::scratch_dir();
    cache_ = dir_ / "cache";
  }
  // Runs baton with the fake hub and the scratch cache; stderr goes to err_.
  baton::testing::RunResult run(const std::string& args, const std::string& token = "") {
    const std::string env = "HF_ENDPOINT='" + hub_.endpoint() + "' BATON_CACHE='" +
                            cache_.string() + "' HF_TOKEN='" + token + "'";
    auto r =
        baton::testing::run_baton(args + " 2> '" + (dir_ / "err.txt").string() + "'", false, env);
    err_ = baton::testing::read_file(dir_ / "err.txt");
    return r;
  }

  FakeHub hub_;
  fs::path dir_, cache_;
  std::string err_;
};

TEST_F(PullCli, PrintsOnlyThePathOnStdoutAndPlainProgressOnStderr) {
  BATON_REQUIRE_BINARY();
  const std::string bytes = gguf_bytes(2 << 20);
  hub_.add("org/m-GGUF", "m-Q4_K_M.gguf", bytes);
  auto r = run("pull org/m-GGUF/m-Q4_K_M.gguf");
  ASSERT_EQ(r.status, 0) << err_;
  const fs::path path = cache_ / "org/m-GGUF/m-Q4_K_M.gguf";
  EXPECT_EQ(r.output, path.string() + "\n");
  EXPECT_EQ(baton::testing::read_file(path), bytes);
  EXPECT_EQ(err_.find('\r'), std::string::npos) << err_;  // stderr is a file, not a terminal
  EXPECT_NE(err_.find("progress: 2.0 MiB / 2.0 MiB  100.0%"), std::string::npos) << err_;
  EXPECT_NE(err_.find("SHA-256 verified"), std::string::npos) << err_;
}

TEST_F(PullCli, QuantAndQuiet) {
  BATON_REQUIRE_BINARY();
  hub_.add("org/m-GGUF", "m-Q4_K_M.gguf", gguf_bytes(1000, 'b'));
  hub_.add("org/m-GGUF", "m-Q8_0.gguf", gguf_bytes(2000, 'c'));
  auto r = run("pull org/m-GGUF --quant q4_k_m --quiet");
  ASSERT_EQ(r.status, 0) << err_;
  EXPECT_EQ(r.output, (cache_ / "org/m-GGUF/m-Q4_K_M.gguf").string() + "\n");
  EXPECT_EQ(err_, "");
  r = run("pull org/m-GGUF --quant Q6_K");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(err_.find("baton: error: org/m-GGUF has no GGUF file for --quant Q6_K; it has: "
                      "Q4_K_M, Q8_0"),
            std::string::npos)
      << err_;
}

TEST_F(PullCli, ErrorsExitOneWithTheFix) {
  BATON_REQUIRE_BINARY();
  hub_.add("org/m", "m.gguf", gguf_bytes(1000));
  hub_.add("org/gated", "m.gguf", gguf_bytes(1000));
  hub_.gate("org/gated", "hf_secret");
  hub_.add("org/m", "page.gguf", "<html>not a model</html>");
  auto r = run("pull org/m/missing.gguf");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.output, "");
  EXPECT_NE(err_.find("\nbaton: error: org/m/missing.gguf: org/m has no file 'missing.gguf'"),
            std::string::npos)
      << err_;
  r = run("pull org/gated/m.gguf");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(err_.find("set HF_TOKEN"), std::string::npos) << err_;
  r = run("pull org/gated/m.gguf", "hf_secret");
  EXPECT_EQ(r.status, 0) << err_;
  EXPECT_EQ(hub_.seen("hub", "GET").back().auth, "Bearer hf_secret");
  r = run("pull org/m/page.gguf");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(err_.find("not a GGUF file"), std::string::npos) << err_;
  EXPECT_FALSE(fs::exists(cache_ / "org/m/page.gguf"));
  r = run("pull not-a-reference");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(err_.find("REPO/FILE.gguf"), std::string::npos) << err_;
}

TEST_F(PullCli, ResumesWithinOneRunAfterADrop) {
  BATON_REQUIRE_BINARY();
  const std::string bytes = gguf_bytes(100000);
  hub_.add("org/m", "m.gguf", bytes).drop_once = true;
  auto r = run("pull org/m/m.gguf");
  ASSERT_EQ(r.status, 0) << err_;
  EXPECT_EQ(baton::testing::read_file(cache_ / "org/m/m.gguf"), bytes);
  EXPECT_NE(err_.find("interrupted at"), std::string::npos) << err_;
  EXPECT_EQ(hub_.seen("cdn", "GET").at(1).range, "bytes=50000-");
}

TEST_F(PullCli, ModelsListsTheCache) {
  BATON_REQUIRE_BINARY();
  auto r = run("models");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find("no models in " + cache_.string()), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("baton pull"), std::string::npos) << r.output;
  hub_.add("org/m", "m.gguf", gguf_bytes(3000));
  ASSERT_EQ(run("pull org/m/m.gguf").status, 0) << err_;
  r = run("models");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find("2.9 KiB"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find((cache_ / "org/m/m.gguf").string()), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("1 model in"), std::string::npos) << r.output;
}

// `serve -m hf:REPO/FILE` downloads the model, then serves it under the file's name.
TEST_F(PullCli, ServePullsAnHfModelFirst) {
  BATON_REQUIRE_BINARY();
  const fs::path model = dir_ / "tiny.gguf";
  ASSERT_EQ(baton::testing::run_baton("gguf synth '" + model.string() +
                                      "' --byte-vocab --ctx 256 --threads 1")
                .status,
            0);
  hub_.add("org/tiny", "tiny.gguf", baton::testing::read_file(model));
  ::setenv("HF_ENDPOINT", hub_.endpoint().c_str(), 1);
  ::setenv("BATON_CACHE", cache_.c_str(), 1);
  const int port = free_port();
  std::string bin = baton::testing::baton_binary(), port_s = std::to_string(port);
  std::vector<std::string> args = {bin,      "serve", "-m",        "hf:org/tiny/tiny.gguf",
                                   "--port", port_s,  "--threads", "1"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  ASSERT_EQ(::posix_spawn(&pid, bin.c_str(), nullptr, nullptr, argv.data(), environ), 0);
  ::unsetenv("HF_ENDPOINT");
  ::unsetenv("BATON_CACHE");
  httplib::Client c("127.0.0.1", port);
  bool ready = false, exited = false;
  int status = 0;
  for (int i = 0; i < 1000 && !ready && !exited; ++i) {
    exited = ::waitpid(pid, &status, WNOHANG) == pid;
    if (exited) break;
    auto h = c.Get("/health");
    ready = h && h->status == 200;
    if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto models = c.Get("/v1/models");
  if (!exited) {
    ::kill(pid, SIGTERM);
    ::waitpid(pid, &status, 0);
  }
  ASSERT_TRUE(ready) << "baton serve -m hf:... never became healthy";
  ASSERT_TRUE(models);
  EXPECT_NE(models->body.find("\"tiny\""), std::string::npos) << models->body;
  EXPECT_EQ(baton::testing::read_file(cache_ / "org/tiny/tiny.gguf"),
            baton::testing::read_file(model));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace baton::pull
