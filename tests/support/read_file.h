// A whole file's bytes, for tests that compare what a program wrote.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace baton::testing {

// The file's contents ("" when it cannot be opened: the caller's expectation then fails).
inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace baton::testing
