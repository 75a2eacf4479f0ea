#pragma once
// `baton serve` as a child process for the bench tests (its output discarded): started on a
// free port, ready once /v1/models answers, stopped with SIGTERM (SIGKILL after 5 s).
#include <fcntl.h>
#include <httplib.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "bench/mock_server.h"
#include "support/shared_files.h"

extern char** environ;

namespace baton::bench::testing {

class ServeProcess {
 public:
  ~ServeProcess() { stop(); }

  // Starts `baton serve -m MODEL --port PORT EXTRA...` and waits up to `wait_s` for it to
  // answer. Returns an error, or "" when it is ready.
  std::string start(const std::string& model, const std::vector<std::string>& extra, int wait_s) {
    port_ = closed_port();
    std::vector<std::string> args = {baton::testing::baton_binary(), "serve", "-m", model, "--port",
                                     std::to_string(port_)};
    args.insert(args.end(), extra.begin(), extra.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    if (posix_spawn(&pid_, argv[0], &fa, nullptr, argv.data(), environ) != 0) pid_ = 0;
    posix_spawn_file_actions_destroy(&fa);
    return wait_ready(wait_s);
  }

  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    int st = 0;
    for (int i = 0; i < 100 && ::waitpid(pid_, &st, WNOHANG) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (::waitpid(pid_, &st, WNOHANG) == 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &st, 0);
    }
    pid_ = 0;
  }

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  std::string wait_ready(int wait_s) {
    httplib::Client cli("127.0.0.1", port_);
    cli.set_connection_timeout(std::chrono::milliseconds(200));
    for (int i = 0; pid_ > 0 && i < wait_s * 10; ++i) {
      if (auto r = cli.Get("/v1/models"); r && r->status == 200) return "";
      int st = 0;
      if (::waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = 0;
        return "baton serve exited at startup (status " + std::to_string(st) + ")";
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (pid_ <= 0) return "baton serve could not be started";
    return "baton serve did not answer /v1/models within " + std::to_string(wait_s) +
           " s on port " + std::to_string(port_);
  }

  pid_t pid_ = 0;
  int port_ = 0;
};

}  // namespace baton::bench::testing
