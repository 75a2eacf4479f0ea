// llama.cpp's tokenizer test vectors (models/ggml-vocab-*.gguf.inp/.out): every case of every
// vocabulary must come out exactly, and decoding must give the input back.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "gguf/gguf_file.h"
#include "support/read_file.h"
#include "support/shared_files.h"
#include "tokenizer/tokenizer.h"

namespace baton::tokenizer {
namespace {

// Cases are joined by "\n__ggml_vocab_test__\n" and the file ends with one (test-tokenizer-0).
std::vector<std::string> read_cases(const std::filesystem::path& p) {
  const std::string sep = "\n__ggml_vocab_test__\n";
  const std::string all = baton::testing::read_file(p);
  std::vector<std::string> cases;
  size_t pos = 0;
  for (size_t hit; (hit = all.find(sep, pos)) != std::string::npos; pos = hit + sep.size()) {
    cases.push_back(all.substr(pos, hit - pos));
  }
  return cases;
}

std::vector<std::vector<int32_t>> read_expected(const std::filesystem::path& p) {
  std::vector<std::vector<int32_t>> out;
  std::istringstream in(baton::testing::read_file(p));
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::vector<int32_t> ids;
    for (int32_t id; ls >> id;) ids.push_back(id);
    out.push_back(std::move(ids));
  }
  return out;
}

std::string show(const std::vector<int32_t>& ids) {
  std::string s;
  for (auto id : ids) s += std::to_string(id) + " ";
  return s;
}

class VocabVectors : public ::testing::TestWithParam<std::string> {};

TEST_P(VocabVectors, ReproducesEveryCase) {
  const std::string base = "models/vocab/ggml-vocab-" + GetParam() + ".gguf";
  BATON_REQUIRE_SHARED(gguf_path, base);
  BATON_REQUIRE_SHARED(inp_path, base + ".inp");
  BATON_REQUIRE_SHARED(out_path, base + ".out");
  auto file = gguf::GgufFile::open(gguf_path.string());
  std::unique_ptr<Tokenizer> tok;
  try {
    tok = Tokenizer::from_gguf(*file);
  } catch (const std::runtime_error& e) {
    if (GetParam() == "bert-bge") {
      EXPECT_NE(std::string(e.what()).find("WordPiece"), std::string::npos) << e.what();
      GTEST_SKIP() << "WordPiece (bert) vocabularies are unsupported: " << e.what();
    }
    FAIL() << e.what();
  }
  const auto cases = read_cases(inp_path);
  const auto expected = read_expected(out_path);
  ASSERT_EQ(cases.size(), expected.size()) << "inp/out case counts differ";
  size_t pass = 0, roundtrip = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto ids = tok->encode(cases[i], false, false);
    if (ids == expected[i]) {
      ++pass;
    } else {
      ADD_FAILURE() << GetParam() << " case " << i << " \"" << cases[i]
                    << "\"\n got:      " << show(ids) << "\n expected: " << show(expected[i]);
    }
    if (tok->decode(ids) == cases[i]) ++roundtrip;
  }
  std::cout << "[ vocab    ] " << GetParam() << ": " << pass << "/" << cases.size()
            << " cases exact, " << roundtrip << "/" << cases.size() << " decode round trips\n";
  EXPECT_EQ(roundtrip, cases.size());
}

INSTANTIATE_TEST_SUITE_P(Llamacpp, VocabVectors,
                         ::testing::Values("llama-spm", "phi-3", "gpt-2", "deepseek-coder",
                                           "deepseek-llm", "falcon", "starcoder", "mpt", "refact",
                                           "bert-bge"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (auto& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace baton::tokenizer
