#pragma once
// Locates the read-only test material (real models, vocabularies, chat templates). It lives in
// ../shared next to the source tree, or wherever BATON_SHARED_DIR points. On a machine without
// it, tests that need those exact files skip and say so; everything else still runs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace baton::testing {

inline std::filesystem::path shared_dir() {
  if (const char* env = std::getenv("BATON_SHARED_DIR")) return env;
  return std::filesystem::path(BATON_SOURCE_DIR) / ".." / "shared";
}

// Path of a file under the shared folder, or empty when it is not there.
inline std::filesystem::path shared_file(const std::string& relative) {
  auto p = shared_dir() / relative;
  return std::filesystem::exists(p) ? p : std::filesystem::path();
}

inline std::string baton_binary() {
  return BATON_BINARY;
}

// A scratch folder unique to the running test.
inline std::filesystem::path scratch_dir() {
  auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  auto dir = std::filesystem::temp_directory_path() / "baton-tests" /
             (std::string(info->test_suite_name()) + "." + info->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace baton::testing

#define BATON_REQUIRE_SHARED(var, relative)           \
  auto var = ::baton::testing::shared_file(relative); \
  if (var.empty())                                    \
  GTEST_SKIP() << "needs ../shared/" << relative      \
               << " (not on this machine; set BATON_SHARED_DIR to run)"

// For tests that run the `baton` executable: sanitizer builds may build the test executables
// without it (BATON_TESTS_BUILD_BINARY=OFF), and then those tests skip instead of failing.
#define BATON_REQUIRE_BINARY()                                    \
  if (!std::filesystem::exists(::baton::testing::baton_binary())) \
  GTEST_SKIP() << "the baton binary is not built (" << ::baton::testing::baton_binary() << ")"
