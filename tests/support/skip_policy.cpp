#include "support/skip_policy.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>

namespace baton::testing {

bool strict_skips() {
  if (const char* v = std::getenv("BATON_STRICT_SKIPS")) return std::string(v) != "0";
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

std::vector<std::string> allowed_skip_patterns(const std::string& file) {
  std::vector<std::string> out;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    out.push_back(line);
  }
  return out;
}

SkipPolicy::SkipPolicy(std::string program, std::vector<std::string> allowed)
    : program_(std::move(program)), allowed_(std::move(allowed)) {}

void SkipPolicy::OnTestPartResult(const ::testing::TestPartResult& result) {
  if (result.skipped()) last_reason_ = result.message();
}

void SkipPolicy::OnTestEnd(const ::testing::TestInfo& info) {
  const auto* r = info.result();
  if (r == nullptr) return;
  const std::string name = std::string(info.test_suite_name()) + "." + info.name();
  if (r->Skipped()) {
    bool allowed = false;
    for (const auto& p : allowed_) allowed = allowed || last_reason_.find(p) != std::string::npos;
    skips_.push_back({name, last_reason_.empty() ? "(no reason given)" : last_reason_, allowed});
  } else {
    ++run_;
  }
  last_reason_.clear();
}

int SkipPolicy::report() const {
  const bool strict = strict_skips();
  int refused = 0;
  for (const auto& s : skips_) {
    const bool fails = strict && !s.allowed;
    refused += fails ? 1 : 0;
    std::printf(
        "[  SKIP    ] %s: %s%s\n", s.test.c_str(), s.reason.c_str(),
        fails ? "  <- not an allowed skip under a strict run (tests/support/allowed_skips.txt)"
              : "");
  }
  char line[512];
  std::snprintf(line, sizeof line, "%s: %d run, %zu skipped%s", program_.c_str(), run_,
                skips_.size(),
                refused ? (", " + std::to_string(refused) + " of them not allowed").c_str() : "");
  std::printf("%s\n", line);
  if (const char* path = std::getenv("BATON_TEST_SUMMARY")) {
    if (FILE* f = std::fopen(path, "a")) {
      std::fprintf(f, "%s\n", line);
      std::fclose(f);
    }
  }
  std::fflush(stdout);
  return refused;
}

}  // namespace baton::testing
