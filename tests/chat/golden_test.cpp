// Every case of every golden file in ../shared/chat-templates/ (see its README.md): the rendered
// text byte for byte, or, for cases where the template itself raises, the same one-line error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "chat/chat_template.h"
#include "support/shared_files.h"

namespace baton::chat {
namespace {

using nlohmann::ordered_json;

ordered_json load(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return ordered_json::parse(in);
}

TEST(ChatGolden, EveryCaseOfEveryFile) {
  BATON_REQUIRE_SHARED(dir, "chat-templates");
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty()) << "no golden files in " << dir;
  size_t files_passed = 0, cases_passed = 0, cases_total = 0;
  for (const auto& path : files) {
    SCOPED_TRACE(path.filename().string());
    const ordered_json golden = load(path);
    const auto& cases = golden.at("cases");
    size_t passed = 0;
    std::string compile_error;
    std::optional<ChatTemplate> tmpl;
    try {
      tmpl = ChatTemplate::from_text(golden.at("source").get<std::string>());
    } catch (const TemplateError& e) {
      compile_error = e.what();
    }
    for (const auto& c : cases) {
      const std::string name = c.at("name").get<std::string>();
      std::string out, error = compile_error;
      if (tmpl) {
        try {
          out = tmpl->render(c.at("context"));
        } catch (const TemplateError& e) {
          error = e.what();
        }
      }
      if (c.contains("error")) {
        const std::string want = c.at("error").get<std::string>();
        EXPECT_EQ(error, want) << name << ": must raise";
        passed += error == want;
      } else {
        const std::string want = c.at("expected").get<std::string>();
        EXPECT_EQ(error, "") << name;
        EXPECT_EQ(out, want) << name;
        passed += error.empty() && out == want;
      }
    }
    std::printf("  %-55s %zu/%zu\n", path.filename().string().c_str(), passed, cases.size());
    files_passed += passed == cases.size();
    cases_passed += passed;
    cases_total += cases.size();
  }
  std::printf("golden files: %zu/%zu, cases: %zu/%zu\n", files_passed, files.size(), cases_passed,
              cases_total);
}

}  // namespace
}  // namespace baton::chat
