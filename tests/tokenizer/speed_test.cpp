// Encodes a prompt of more than 10k tokens and prints how long it took (a figure for the
// record, not an assertion: the machines that run the tests vary too much).
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>

#include "tok_test_util.h"

namespace baton::tokenizer {
namespace {

std::string long_prompt() {
  const std::string para =
      "The quick brown fox jumps over the lazy dog; meanwhile 12345 llamas 🦙 graze in "
      "Ünïcödé fields near 東京 and Москва. She said: \"don't stop\" — and they didn't!\n"
      "    for (int i = 0; i < n; ++i) { total += values[i] * 3.14159; }\n";
  std::string s;
  while (s.size() < 60000) s += para;
  return s;
}

class Speed : public ::testing::TestWithParam<std::string> {};

TEST_P(Speed, TenThousandTokenPrompt) {
  BATON_REQUIRE_TOKENIZER(tok, testing::vocab_path(GetParam()));
  const std::string text = long_prompt();
  const auto t0 = std::chrono::steady_clock::now();
  const auto ids = tok->encode(text, true);
  const auto t1 = std::chrono::steady_clock::now();
  const auto back = tok->decode(ids);
  const auto t2 = std::chrono::steady_clock::now();
  ASSERT_GE(ids.size(), 10000u);
  EXPECT_EQ(back, text);
  const auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  std::cout << "[ speed    ] " << GetParam() << ": " << ids.size() << " tokens, encode "
            << ms(t1 - t0) << " ms, decode " << ms(t2 - t1) << " ms\n";
}

INSTANTIATE_TEST_SUITE_P(Vocab, Speed, ::testing::Values("llama-spm", "gpt-2", "deepseek-llm"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (auto& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace baton::tokenizer

namespace baton::tokenizer {
namespace {

// Long runs of one character class stress the regexes' backtracking and the merge loops.
TEST_P(Speed, PathologicalRunsRoundTrip) {
  BATON_REQUIRE_TOKENIZER(tok, testing::vocab_path(GetParam()));
  for (const std::string& text :
       {std::string(100000, ' '), std::string(50000, '7'), std::string(50000, 'a'),
        std::string(30000, '\n') + "x", std::string(20000, '!') + " " + std::string(20000, '\t')}) {
    const auto ids = tok->encode(text, false);
    EXPECT_FALSE(ids.empty());
    EXPECT_EQ(tok->decode(ids), text) << GetParam() << " run of " << int(text[0]);
  }
}

}  // namespace
}  // namespace baton::tokenizer
