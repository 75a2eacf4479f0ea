// SentencePiece-style encoding on small hand-built vocabularies, where every merge decision can
// be worked out by hand.
#include <gtest/gtest.h>

#include "tokenizer/tokenizer.h"

namespace baton::tokenizer {
namespace {

constexpr int kUnk = 0, kBos = 1, kEos = 2;

// <unk> <s> </s> then pieces with the given scores (all Normal).
VocabSpec spm_spec(const std::vector<std::pair<std::string, float>>& pieces) {
  VocabSpec s;
  s.model = Model::Spm;
  s.tokens = {"<unk>", "<s>", "</s>"};
  s.scores = {0, 0, 0};
  s.types = {2, 3, 3};
  for (const auto& [p, score] : pieces) {
    s.tokens.push_back(p);
    s.scores.push_back(score);
    s.types.push_back(1);
  }
  s.unk_id = kUnk;
  s.bos_id = kBos;
  s.eos_id = kEos;
  return s;
}

TEST(Spm, MergesHighestScoreFirst) {
  // ids: 3 ▁  4 a  5 b  6 c  7 ▁a  8 ab  9 bc  10 ▁ab
  auto tok = Tokenizer::from_spec(spm_spec({{"▁", -1},
                                            {"a", -1},
                                            {"b", -1},
                                            {"c", -1},
                                            {"▁a", -3},
                                            {"ab", -2},
                                            {"bc", -0.5},
                                            {"▁ab", -1}}));
  // "▁abc": bc (-0.5) wins over ab (-2) and ▁a (-3); then only ▁a is left.
  EXPECT_EQ(tok->encode("abc", false), (std::vector<int32_t>{7, 9}));
  // "▁ab": ab (-2) beats ▁a (-3), then ▁+ab = ▁ab.
  EXPECT_EQ(tok->encode("ab", false), (std::vector<int32_t>{10}));
  EXPECT_EQ(tok->encode("ab", true), (std::vector<int32_t>{kBos, 10}));
}

TEST(Spm, TiesGoToTheLeftmostPair) {
  auto spec = spm_spec({{"a", -1}, {"aa", -1}});
  spec.add_space_prefix = false;
  auto tok = Tokenizer::from_spec(spec);
  EXPECT_EQ(tok->encode("aaa", false), (std::vector<int32_t>{4, 3}));
  EXPECT_EQ(tok->encode("aaaa", false), (std::vector<int32_t>{4, 4}));
}

TEST(Spm, UnknownTokenWithoutByteFallback) {
  auto tok = Tokenizer::from_spec(spm_spec({{"▁", -1}, {"a", -1}}));
  EXPECT_EQ(tok->encode("aéa", false), (std::vector<int32_t>{3, 4, kUnk, 4}));
}

TEST(Spm, ByteFallbackForMissingPieces) {
  auto spec = spm_spec({{"▁", -1}, {"a", -1}});
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    spec.tokens.push_back(name);
    spec.scores.push_back(0);
    spec.types.push_back(6);
  }
  auto tok = Tokenizer::from_spec(spec);
  const int32_t b0 = 5;  // id of <0x00>
  EXPECT_EQ(tok->encode("aé", false), (std::vector<int32_t>{3, 4, b0 + 0xC3, b0 + 0xA9}));
  EXPECT_EQ(tok->decode(tok->encode("aé a", true)), "aé a");
  EXPECT_EQ(tok->token_to_piece(b0 + 0xC3), "\xC3");
}

TEST(Spm, SpacePrefixAndDecodeStripping) {
  auto tok = Tokenizer::from_spec(spm_spec({{"▁", -1}, {"a", -1}, {"▁a", -0.5}}));
  EXPECT_TRUE(tok->add_bos());
  EXPECT_TRUE(tok->add_space_prefix());
  // " a" becomes "▁▁a": the text keeps its own space after the prefix one.
  EXPECT_EQ(tok->encode(" a", false), (std::vector<int32_t>{3, 5}));
  EXPECT_EQ(tok->decode({3, 5}), " a");
  EXPECT_EQ(tok->decode({kBos, 3, 5}), " a");
  EXPECT_EQ(tok->decode({kBos, 5}), "a");
  EXPECT_EQ(tok->decode({5, 5}), "a a");
  EXPECT_EQ(tok->token_to_piece(5), " a");
  auto no_prefix = spm_spec({{"▁", -1}, {"a", -1}, {"▁a", -0.5}});
  no_prefix.add_space_prefix = false;
  auto tok2 = Tokenizer::from_spec(no_prefix);
  EXPECT_EQ(tok2->encode("a", false), (std::vector<int32_t>{4}));
  EXPECT_EQ(tok2->decode({5}), " a");
}

TEST(Spm, ControlTokensOnlyWithParseSpecial) {
  auto spec = spm_spec({{"▁", -1}, {"<", -1}, {">", -1}, {"s", -1}, {"/", -1}, {"x", -1}});
  spec.tokens.push_back("<s>x");  // a longer control text wins over <s>
  spec.scores.push_back(0);
  spec.types.push_back(3);
  auto tok = Tokenizer::from_spec(spec);
  const int32_t long_id = tok->n_vocab() - 1;
  EXPECT_EQ(tok->encode("<s>x</s>", false, true), (std::vector<int32_t>{long_id, kEos}));
  const auto plain = tok->encode("<s>x</s>", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), kEos), 0);
  EXPECT_EQ(tok->decode(plain), "<s>x</s>");
  // Control tokens vanish from decode unless asked for.
  EXPECT_EQ(tok->decode({kBos, 3, 8, kEos}), "x");  // "▁x" after BOS → "x"
  EXPECT_EQ(tok->decode({kBos, 3, 8, kEos}, false), "<s>x</s>");
  EXPECT_TRUE(tok->is_eog(kEos));
  EXPECT_TRUE(tok->is_control(kBos));
  EXPECT_FALSE(tok->is_control(4));
  EXPECT_EQ(tok->token_id("</s>"), kEos);
  EXPECT_EQ(tok->token_id("nope"), std::nullopt);
}

TEST(Spm, EmptyAndOutOfRange) {
  auto tok = Tokenizer::from_spec(spm_spec({{"▁", -1}}));
  EXPECT_TRUE(tok->encode("", false).empty());
  EXPECT_EQ(tok->encode("", true), (std::vector<int32_t>{kBos}));
  EXPECT_EQ(tok->decode({-5, 1000}), "");
  EXPECT_EQ(tok->decode({-5, 3}), " ");  // only the first token loses its space
  EXPECT_EQ(tok->token_to_piece(99999), "");
  EXPECT_FALSE(tok->is_eog(-1));
}

TEST(Spm, MalformedByteTokenDecodesAsText) {
  auto spec = spm_spec({{"▁", -1}});
  spec.tokens.push_back("<0xZZ>");
  spec.scores.push_back(0);
  spec.types.push_back(6);
  auto tok = Tokenizer::from_spec(spec);
  EXPECT_EQ(tok->token_to_piece(4), "<0xZZ>");
}

TEST(Spm, BadSpecsAreRejectedWithTheKeyNamed) {
  VocabSpec empty;
  try {
    Tokenizer::from_spec(empty);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.ggml.tokens"), std::string::npos);
  }
  auto bad = spm_spec({{"a", 0}});
  bad.scores.pop_back();
  try {
    Tokenizer::from_spec(bad);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.ggml.scores"), std::string::npos);
  }
}

}  // namespace
}  // namespace baton::tokenizer
