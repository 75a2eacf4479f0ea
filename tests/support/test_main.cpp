#include <gtest/gtest.h>

#include <filesystem>

#include "support/skip_policy.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const std::string program = std::filesystem::path(argv[0]).filename().string();
  auto* policy = new baton::testing::SkipPolicy(
      program, baton::testing::allowed_skip_patterns(std::string(BATON_SOURCE_DIR) +
                                                     "/tests/support/allowed_skips.txt"));
  testing::UnitTest::GetInstance()->listeners().Append(policy);  // gtest owns it
  const int rc = RUN_ALL_TESTS();
  if (GTEST_FLAG_GET(list_tests)) return rc;  // nothing ran
  const int refused = policy->report();
  if (refused > 0) {
    std::printf(
        "FAILED: %d test(s) skipped under a strict run; make what they need available "
        "(bash scripts/install-deps.sh, ../shared or BATON_SHARED_DIR) or set "
        "BATON_STRICT_SKIPS=0\n",
        refused);
    return 1;
  }
  return rc;
}
