#pragma once
// Locates the read-only test material (real models, vocabularies, chat templates). It lives in
// ../shared next to the source tree, or wherever BATON_SHARED_DIR points. On a machine without
// it, tests that need those exact files skip and say so; everything else still runs.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
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

// This process's folder under $TMPDIR/baton-tests: two runs of a suite at once (two build trees,
// a developer beside CI) must not remove each other's files. A run's files stay after it ends,
// for a look after a failure, until the next run starts and removes the folders of ended runs.
inline std::filesystem::path scratch_root() {
  static const std::filesystem::path root = [] {
    namespace fs = std::filesystem;
    const fs::path base = fs::temp_directory_path() / "baton-tests";
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(base, ec)) {
      const std::string name = e.path().filename().string();
      if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
      if (::kill(static_cast<pid_t>(std::stol(name)), 0) != 0 && errno == ESRCH) {
        fs::remove_all(e.path(), ec);
      }
    }
    return base / std::to_string(::getpid());
  }();
  return root;
}

// A scratch folder unique to the running test, empty on each call.
inline std::filesystem::path scratch_dir() {
  auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  auto dir = scratch_root() / (std::string(info->test_suite_name()) + "." + info->name());
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
