#pragma once
// What a test run skipped, said at its end, and under a strict run (CI=true or
// BATON_STRICT_SKIPS=1) a failure for every skip that tests/support/allowed_skips.txt does not
// list: a suite must not pass by skipping what it claims to test.
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace baton::testing {

// True under CI=true (what CI sets) or BATON_STRICT_SKIPS=1; BATON_STRICT_SKIPS=0 turns it off.
bool strict_skips();

// The allowed-skip patterns: non-comment, non-empty lines of allowed_skips.txt.
std::vector<std::string> allowed_skip_patterns(const std::string& file);

class SkipPolicy : public ::testing::EmptyTestEventListener {
 public:
  SkipPolicy(std::string program, std::vector<std::string> allowed);

  // Prints "<program>: N run, M skipped" with each skip's reason, appends that line to the file
  // $BATON_TEST_SUMMARY names (scripts/test.sh prints them all at the end), and returns how many
  // skips a strict run must fail for.
  int report() const;

  void OnTestPartResult(const ::testing::TestPartResult& result) override;
  void OnTestEnd(const ::testing::TestInfo& info) override;

 private:
  struct Skip {
    std::string test, reason;
    bool allowed;
  };
  std::string program_;
  std::vector<std::string> allowed_;
  std::string last_reason_;
  int run_ = 0;
  std::vector<Skip> skips_;
};

}  // namespace baton::testing
