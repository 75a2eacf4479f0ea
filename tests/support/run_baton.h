#pragma once
// Runs the real `baton` binary with a shell command line, for the CLI tests.
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "support/shared_files.h"

namespace baton::testing {

struct RunResult {
  int status = -1;
  std::string output;
};

// stderr is merged only when asked, so that stdout can be compared byte for byte. `env` is
// prefixed to the command line (e.g. "PYTHONPATH=/x").
inline RunResult run_baton(const std::string& args, bool with_stderr = true,
                           const std::string& env = "") {
  std::string cmd = env + " '" + baton_binary() + "' " + args + (with_stderr ? " 2>&1" : "");
  RunResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

}  // namespace baton::testing
