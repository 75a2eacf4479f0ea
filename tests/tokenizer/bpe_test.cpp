// Byte-level BPE on a hand-built vocabulary, and the pre-tokenizer regex sets on their own.
#include <gtest/gtest.h>

#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace baton::tokenizer {
namespace {

// The 256 byte characters (ids 0..255 = byte values), then the merged pieces and a control
// token. Merges are given in rank order.
VocabSpec bpe_spec(const std::vector<std::string>& merges, std::string pre = "gpt-2") {
  VocabSpec s;
  s.model = Model::Bpe;
  s.pre = std::move(pre);
  for (int b = 0; b < 256; ++b) s.tokens.emplace_back(utf8::byte_to_unicode(uint8_t(b)));
  for (const auto& m : merges) {
    const auto sp = m.find(' ');
    s.tokens.push_back(m.substr(0, sp) + m.substr(sp + 1));
  }
  s.merges = merges;
  s.tokens.push_back("<|endoftext|>");
  s.types.assign(s.tokens.size(), 1);
  s.types.back() = 3;
  s.eos_id = s.bos_id = static_cast<int32_t>(s.tokens.size()) - 1;
  return s;
}

TEST(Bpe, MergesByLowestRank) {
  // 256 "ab", 257 "abc", 258 "Ġa", 259 <|endoftext|>
  auto tok = Tokenizer::from_spec(bpe_spec({"a b", "ab c", "Ġ a"}));
  EXPECT_EQ(tok->encode("abc", false), (std::vector<int32_t>{257}));
  // " abc": "a b" (rank 0) beats "Ġ a" (rank 2), then "ab c"; "Ġ abc" is no merge.
  EXPECT_EQ(tok->encode(" abc", false), (std::vector<int32_t>{' ', 257}));
  EXPECT_EQ(tok->encode(" ab", false), (std::vector<int32_t>{' ', 256}));
  EXPECT_EQ(tok->encode(" a", false), (std::vector<int32_t>{258}));
  EXPECT_EQ(tok->decode(tok->encode("abc abc", false)), "abc abc");
  EXPECT_EQ(tok->token_to_piece(258), " a");
  EXPECT_FALSE(tok->add_bos());
  EXPECT_FALSE(tok->add_space_prefix());
}

TEST(Bpe, TiesGoToTheLeftmostPair) {
  auto tok = Tokenizer::from_spec(bpe_spec({"a a"}));
  EXPECT_EQ(tok->encode("aaa", false), (std::vector<int32_t>{256, 'a'}));
  EXPECT_EQ(tok->encode("aaaaa", false), (std::vector<int32_t>{256, 256, 'a'}));
}

TEST(Bpe, ControlTokenOnlyWithParseSpecial) {
  auto tok = Tokenizer::from_spec(bpe_spec({"a b"}));
  const int32_t eot = tok->n_vocab() - 1;
  EXPECT_EQ(tok->encode("ab<|endoftext|>ab", false, true), (std::vector<int32_t>{256, eot, 256}));
  const auto plain = tok->encode("ab<|endoftext|>ab", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), eot), 0);
  EXPECT_EQ(tok->decode(plain), "ab<|endoftext|>ab");
  EXPECT_EQ(tok->decode({256, eot}), "ab");
  EXPECT_EQ(tok->decode({256, eot}, false), "ab<|endoftext|>");
  EXPECT_TRUE(tok->is_eog(eot));
  EXPECT_EQ(tok->eot_id(), eot);  // found by its text
}

TEST(Bpe, Llama3LooksWholeChunksUpFirst) {
  auto spec = bpe_spec({"a b"}, "llama3");
  spec.tokens.insert(spec.tokens.end() - 1, "abc");  // in the vocabulary, but no merge makes it
  spec.types.back() = 1;
  spec.types.push_back(3);
  spec.bos_id = spec.eos_id = 258;
  auto tok = Tokenizer::from_spec(spec);
  EXPECT_TRUE(tok->add_bos());
  EXPECT_EQ(tok->encode("abc", true),
            (std::vector<int32_t>{258, 257}));  // llama3 vocabularies start with BOS by default
  EXPECT_EQ(tok->encode("abc", false), (std::vector<int32_t>{257}));
  spec.pre = "gpt-2";
  auto gpt2 = Tokenizer::from_spec(spec);
  EXPECT_EQ(gpt2->encode("abc", false), (std::vector<int32_t>{256, 'c'}));
}

TEST(Bpe, ArbitraryBytesRoundTrip) {
  auto tok = Tokenizer::from_spec(bpe_spec({"a b"}));
  const std::string bytes("\xff\xfe\x00 ab\xc3\x28\xe2\x82", 10);
  EXPECT_EQ(tok->decode(tok->encode(bytes, false)), bytes);
}

TEST(Bpe, UnknownPreIsAnErrorNamingIt) {
  try {
    Tokenizer::from_spec(bpe_spec({"a b"}, "no-such-pre"));
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("no-such-pre"), std::string::npos) << msg;
    EXPECT_NE(msg.find("llama3"), std::string::npos) << msg;
    EXPECT_NE(msg.find("tokenizer.ggml.pre"), std::string::npos) << msg;
  }
}

TEST(Bpe, MissingMergesIsAnError) {
  auto spec = bpe_spec({"a b"});
  spec.merges.clear();
  EXPECT_THROW(Tokenizer::from_spec(spec), std::runtime_error);
  spec.merges = {"ab"};
  EXPECT_THROW(Tokenizer::from_spec(spec), std::runtime_error);
}

std::vector<std::string> pieces(std::string_view pre, std::string_view text) {
  auto p = Pretokenizer::create(pre);
  std::vector<std::string> out;
  for (auto [off, len] : p->split(text)) out.emplace_back(text.substr(off, len));
  return out;
}

using V = std::vector<std::string>;

TEST(Pretokenizer, Gpt2) {
  EXPECT_EQ(pieces("gpt-2", "I'm  fine, 12345!\n\nok"),
            (V{"I", "'m", " ", " fine", ",", " 12345", "!", "\n", "\n", "ok"}));
}

TEST(Pretokenizer, Llama3GroupsDigitsInThrees) {
  EXPECT_EQ(pieces("llama3", "Hello world 12345!!\n\n"),
            (V{"Hello", " world", " ", "123", "45", "!!\n\n"}));
  EXPECT_EQ(pieces("llama-bpe", "I'M"), (V{"I", "'M"}));
  EXPECT_TRUE(Pretokenizer::create("llama3")->ignore_merges());
}

TEST(Pretokenizer, Qwen2SplitsEveryDigit) {
  EXPECT_EQ(pieces("qwen2", "x 123"), (V{"x", " ", "1", "2", "3"}));
}

TEST(Pretokenizer, UnicodeCategories) {
  // Letters of any script join a word; non-ASCII digits count as numbers.
  EXPECT_EQ(pieces("gpt-2", "naïve Ωμέγα ٣٤"), (V{"naïve", " Ωμέγα", " ٣٤"}));
  EXPECT_EQ(pieces("starcoder", "a12"), (V{"a", "1", "2"}));
}

TEST(Pretokenizer, SequencesOfRegexes) {
  // falcon: punctuation runs first, then the GPT-2 rule, then digits in threes.
  EXPECT_EQ(pieces("falcon", "x=1234;"), (V{"x", "=", "123", "4", ";"}));
  // deepseek-coder: CJK runs apart from Latin words, single digits.
  EXPECT_EQ(pieces("deepseek-coder", "ab中文12"), (V{"ab", "中文", "1", "2"}));
  // deepseek-llm: trailing whitespace at the very end is one piece.
  EXPECT_EQ(pieces("deepseek-llm", "hi  "), (V{"hi", "  "}));
}

TEST(Pretokenizer, MissingNameUsesDefault) {
  EXPECT_EQ(pieces("", "a+b"), pieces("default", "a+b"));
  EXPECT_EQ(pieces("", "a+b"), (V{"a", "+", "b"}));
}

TEST(Pretokenizer, InvalidBytesStandAlone) {
  EXPECT_EQ(pieces("gpt-2", "ab\xff\xfe cd"), (V{"ab", "\xff", "\xfe", " cd"}));
  EXPECT_EQ(pieces("llama3", "x\xe2\x82"), (V{"x", "\xe2", "\x82"}));
}

TEST(Pretokenizer, EverySupportedNameCompiles) {
  for (const auto& name : Pretokenizer::supported_names()) {
    EXPECT_NO_THROW(Pretokenizer::create(name)) << name;
  }
}

}  // namespace
}  // namespace baton::tokenizer
