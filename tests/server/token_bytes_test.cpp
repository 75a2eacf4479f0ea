// tokenizer::TextCodec::max_token_bytes bounds the input bytes any one token covers, so the server
// can reject a text prompt that cannot fit in the context without tokenizing it.
#include <gtest/gtest.h>

#include <random>

#include "server/vocab_support.h"
#include "tokenizer/tokenizer_codec.h"

namespace baton::server {
namespace {

std::vector<std::string> split_atoms(const std::string& all) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t sep; (sep = all.find(';', start)) != std::string::npos; start = sep + 1) {
    out.push_back(all.substr(start, sep - start));
  }
  out.push_back(all.substr(start));
  return out;
}

// Words, whitespace runs, digits, punctuation, multi-byte characters and real vocabulary
// pieces (the longest one included), in random order.
std::string random_text(std::mt19937& rng, const tokenizer::Tokenizer& tok, int32_t longest) {
  // Separated by ';' to keep the list short.
  static const std::string kAtoms =
      "the; quick; brown;fox;12345;3.14;!!;?;\n;\n\n;\t;    ;        ;é;日本語;😀;Привет;"
      "{\"k\": [1, 2]};<|endoftext|>;</s>;<s>";
  static const std::vector<std::string> atoms = split_atoms(kAtoms);
  std::uniform_int_distribution<size_t> pick(0, atoms.size() - 1);
  std::uniform_int_distribution<int32_t> any_id(0, tok.n_vocab() - 1);
  std::uniform_int_distribution<int> kind(0, 9), run(1, 64);
  std::string text;
  while (text.size() < 4000) {
    switch (kind(rng)) {
      case 0:
        text += tok.token_to_piece(any_id(rng));
        break;
      case 1:
        text += tok.token_to_piece(longest);
        break;
      case 2:
        text += std::string(static_cast<size_t>(run(rng)), ' ');
        break;
      default:
        text += atoms[pick(rng)];
    }
  }
  return text;
}

int32_t longest_token(const tokenizer::Tokenizer& tok) {
  int32_t best = 0;
  for (int32_t id = 0; id < tok.n_vocab(); ++id) {
    if (tok.token_text(id).size() > tok.token_text(best).size()) best = id;
  }
  return best;
}

class MaxTokenBytes : public ::testing::TestWithParam<const char*> {};

TEST_P(MaxTokenBytes, NoTokenOfARandomTextCoversMoreBytes) {
  const std::string name = GetParam();
  tokenizer::VocabSpec spec = testing::shared_vocab_spec(name);
  if (spec.tokens.empty()) GTEST_SKIP() << "needs ../shared/" << testing::vocab_file(name);
  auto tok = tokenizer::Tokenizer::from_spec(std::move(spec));
  tokenizer::TokenizerCodec codec(*tok);
  const size_t bound = codec.max_token_bytes();
  const int32_t longest = longest_token(*tok);
  EXPECT_EQ(bound, std::max<size_t>(4, tok->token_text(longest).size()));
  std::mt19937 rng(1234);
  size_t widest = 0;
  for (int round = 0; round < 8; ++round) {
    const std::string text = random_text(rng, *tok, longest);
    for (bool special : {false, true}) {
      const auto ids = tok->encode(text, false, special);
      // decode(encode(x)) == x, so each token's decoded piece is the input it covered.
      bool strip = tok->strips_space_after_special();
      for (int32_t id : ids) {
        const size_t covered = tok->decode_piece(id, false, strip).size();
        widest = std::max(widest, covered);
        ASSERT_LE(covered, bound) << name << " token " << id << " \"" << tok->token_text(id)
                                  << "\"";
      }
      EXPECT_LE(text.size(), ids.size() * bound) << name;
    }
  }
  EXPECT_GT(widest, 0u);
}

INSTANTIATE_TEST_SUITE_P(SharedVocabularies, MaxTokenBytes,
                         ::testing::Values("llama-spm", "phi-3", "gpt-2", "deepseek-coder",
                                           "deepseek-llm", "falcon", "starcoder", "mpt", "refact",
                                           "baichuan", "gpt-neox"));

}  // namespace
}  // namespace baton::server
