// `baton tokenize`, run as a separate process.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "support/shared_files.h"

namespace baton::tokenizer {
namespace {

struct Run {
  int status;
  std::string out;
  std::string err;
};

// Runs `baton ARGS`; stderr goes to a file in `dir` (the test's scratch folder).
Run run_baton(const std::filesystem::path& dir, const std::string& args) {
  const auto err_path = dir / "stderr.txt";
  const std::string cmd =
      "'" + ::baton::testing::baton_binary() + "' " + args + " 2>'" + err_path.string() + "'";
  Run r{-1, {}, {}};
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;) r.out.append(buf, n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream e(err_path);
  r.err.assign(std::istreambuf_iterator<char>(e), {});
  return r;
}

TEST(CliTokenize, PrintsIdsOnOneLine) {
  BATON_REQUIRE_BINARY();
  const auto dir = ::baton::testing::scratch_dir();
  BATON_REQUIRE_SHARED(model, "models/stories260K.gguf");
  const std::string m = "-m '" + model.string() + "' ";
  auto r = run_baton(dir, "tokenize " + m + "'Once upon a time'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "1 403 407 261 378\n");
  r = run_baton(dir, "tokenize --no-bos " + m + "'Once upon a time'");
  EXPECT_EQ(r.out, "403 407 261 378\n");

  const auto file = dir / "prompt.txt";
  std::ofstream(file) << "Once upon a time";
  r = run_baton(dir, "tokenize " + m + "--file '" + file.string() + "'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "1 403 407 261 378\n");
}

TEST(CliTokenize, ParseSpecialFlag) {
  BATON_REQUIRE_BINARY();
  const auto dir = ::baton::testing::scratch_dir();
  BATON_REQUIRE_SHARED(model, "models/vocab/ggml-vocab-gpt-2.gguf");
  const std::string m = "-m '" + model.string() + "' ";
  auto r = run_baton(dir, "tokenize --parse-special " + m + "'<|endoftext|>'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "50256\n");
  r = run_baton(dir, "tokenize " + m + "'<|endoftext|>'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out, "50256\n");
}

TEST(CliTokenize, ErrorsAreOneLine) {
  BATON_REQUIRE_BINARY();
  const auto dir = ::baton::testing::scratch_dir();
  auto r = run_baton(dir, "tokenize -m /nonexistent/model.gguf hello");
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(r.out.empty());
  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  BATON_REQUIRE_SHARED(bert, "models/vocab/ggml-vocab-bert-bge.gguf");
  r = run_baton(dir, "tokenize -m '" + bert.string() + "' hello");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("WordPiece"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

}  // namespace
}  // namespace baton::tokenizer
