// decode(encode(x)) == x over a corpus of awkward text, on every supported shared vocabulary,
// plus random byte strings for the vocabularies that can spell any byte.
#include <gtest/gtest.h>

#include <random>

#include "tok_test_util.h"
#include "util/utf8.h"

namespace baton::tokenizer {
namespace {

using testing::vocab_path;

const std::vector<std::string>& corpus() {
  static const std::vector<std::string> c = {
      "Hello, world!",
      "  leading and trailing  ",
      "tabs\tand\nnewlines\r\n\n\n  mixed \t \n",
      "多语言文本：中文、日本語のテキスト、한국어 텍스트",
      "emoji 🦙🚀 family 👩‍👩‍👧 flag 🇫🇷 skin 👍🏽",
      "combining: e\xCC\x81 a\xCC\x88 n\xCC\x83 Z\xCC\xA4\xCC\x88 "
      "\xE0\xA4\x95\xE0\xA5\x8D\xE0\xA4\xB7",
      "Ünïcödé façade naïve coöperate",
      "math ∑∫√∞ ≤≥ ½ ¾ 10⁻³",
      "   \n  \t  ",
      "",
      " ",
      "12345678901234567890 3.14159 -42 1,000,000",
      "they're we'll I'd it's DON'T",
      "code: for (int i = 0; i < n; ++i) { x[i] += 1; }  // done",
      "<|endoftext|> <s> </s> <|im_end|>",
      "\x01\x02\x1f control chars \x7f",
      "Привет мир! Γειά σου κόσμε! مرحبا بالعالم שלום עולם",
  };
  return c;
}

class RoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(RoundTrip, Corpus) {
  BATON_REQUIRE_TOKENIZER(tok, vocab_path(GetParam()));
  for (const auto& text : corpus()) {
    for (bool bos : {false, true}) {
      EXPECT_EQ(tok->decode(tok->encode(text, bos)), text) << GetParam() << " bos=" << bos;
    }
  }
}

// The bytes a vocabulary can spell on their own: a <0xNN> byte token (SentencePiece) or a
// Normal token for the byte's character (byte-level BPE). Most BPE vocabularies lack the bytes
// that never occur in UTF-8 (C0, C1, F5..FF); falcon also lacks a few control bytes.
std::vector<char> spellable_bytes(const Tokenizer& tok) {
  std::vector<char> out;
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    const bool spm = tok.model() == Model::Spm;
    const auto id = spm ? tok.token_id(name) : tok.token_id(utf8::byte_to_unicode(uint8_t(b)));
    if (id && tok.token_type(*id) == (spm ? TokenType::Byte : TokenType::Normal)) {
      out.push_back(static_cast<char>(b));
    }
  }
  return out;
}

// Random byte strings, most of them invalid UTF-8 (stray continuation bytes, truncated and
// overlong sequences), over the bytes the vocabulary can spell.
TEST_P(RoundTrip, ArbitraryBytes) {
  BATON_REQUIRE_TOKENIZER(tok, vocab_path(GetParam()));
  const auto bytes = spellable_bytes(*tok);
  ASSERT_GE(bytes.size(), 200u) << GetParam();
  std::mt19937 rng(1234);
  for (int n = 0; n < 200; ++n) {
    std::string s(rng() % 48, '\0');
    for (auto& c : s) c = bytes[rng() % bytes.size()];
    const auto ids = tok->encode(s, false);
    ASSERT_EQ(tok->decode(ids), s) << GetParam() << " case " << n;
  }
}

// Random text from a mix of scripts, emoji, combining marks and whitespace: valid UTF-8 that
// every vocabulary can spell.
TEST_P(RoundTrip, RandomUnicodeText) {
  BATON_REQUIRE_TOKENIZER(tok, vocab_path(GetParam()));
  static const std::vector<std::pair<uint32_t, uint32_t>> ranges = {
      {0x20, 0x7E},   {0x20, 0x7E},     {0xA0, 0x17F},    {0x300, 0x36F},
      {0x400, 0x4FF}, {0x4E00, 0x4FFF}, {0xAC00, 0xACFF}, {0x1F300, 0x1F64F},
      {' ', ' '},     {'\n', '\n'},     {'\t', '\t'}};
  std::mt19937 rng(99);
  for (int n = 0; n < 100; ++n) {
    std::string s;
    const int len = static_cast<int>(rng() % 40);
    for (int i = 0; i < len; ++i) {
      const auto [lo, hi] = ranges[rng() % ranges.size()];
      util::append_utf8(s, lo + rng() % (hi - lo + 1));
    }
    const auto ids = tok->encode(s, n % 2 == 0);
    ASSERT_EQ(tok->decode(ids), s) << GetParam() << " case " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Vocab, RoundTrip,
                         ::testing::Values("llama-spm", "phi-3", "gpt-2", "deepseek-coder",
                                           "deepseek-llm", "falcon", "starcoder", "mpt", "refact",
                                           "gpt-neox", "baichuan"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (auto& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace baton::tokenizer
