// StreamDecoder: text comes out as soon as it is whole UTF-8, never half a character, and the
// pieces add up to decode().
#include <gtest/gtest.h>

#include "tok_test_util.h"

namespace baton::tokenizer {
namespace {

using testing::valid_utf8;
using testing::vocab_path;

struct Streamed {
  std::string text;
  size_t empty_pushes = 0;
};

Streamed stream(const Tokenizer& tok, const std::vector<int32_t>& ids, bool skip_special = true) {
  StreamDecoder dec(tok, skip_special);
  Streamed s;
  for (int32_t id : ids) {
    const std::string piece = dec.push(id);
    EXPECT_TRUE(valid_utf8(piece)) << "partial UTF-8 emitted after id " << id;
    if (piece.empty()) ++s.empty_pushes;
    s.text += piece;
  }
  s.text += dec.flush();
  return s;
}

const std::vector<std::string> kTexts = {
    "Hello world",
    " two  spaces and\ttabs\n",
    "🦙 llamas 🚀 rockets 👩‍👩‍👧",
    "多语言文本 한국어 Ünïcödé e\xCC\x81",
    "𝄞 music 𓀀 hieroglyph",
};

class Stream : public ::testing::TestWithParam<std::string> {};

TEST_P(Stream, ConcatenationEqualsDecode) {
  BATON_REQUIRE_TOKENIZER(tok, vocab_path(GetParam()));
  size_t held_back = 0;
  for (const auto& text : kTexts) {
    for (bool bos : {false, true}) {
      const auto ids = tok->encode(text, bos);
      const auto s = stream(*tok, ids);
      EXPECT_EQ(s.text, tok->decode(ids)) << GetParam() << ": " << text;
      EXPECT_EQ(s.text, text);
      held_back += s.empty_pushes;
    }
  }
  // Emoji and rare characters are split over several tokens in every vocabulary here, so some
  // pushes must have held bytes back.
  EXPECT_GT(held_back, 0u);
}

TEST_P(Stream, InvalidBytesBecomeReplacementCharacters) {
  BATON_REQUIRE_TOKENIZER(tok, vocab_path(GetParam()));
  const std::string text = "ok \x80 then \xE2\x82 end \xF0\x9F\xA6";
  const auto ids = tok->encode(text, false);
  const auto raw = tok->decode(ids);
  const auto s = stream(*tok, ids);
  EXPECT_EQ(s.text, sanitize_utf8(raw));
  EXPECT_TRUE(valid_utf8(s.text));
}

INSTANTIATE_TEST_SUITE_P(Vocab, Stream, ::testing::Values("llama-spm", "gpt-2", "deepseek-llm"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (auto& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

TEST(StreamGpt2, EmojiWaitsForItsLastByte) {
  BATON_REQUIRE_TOKENIZER(tok, vocab_path("gpt-2"));
  // Feed the four bytes of 🦙 as single-byte tokens.
  StreamDecoder dec(*tok);
  const std::string llama = "🦙";
  for (size_t i = 0; i + 1 < llama.size(); ++i) {
    EXPECT_EQ(dec.push(*tok->token_id(utf8::byte_to_unicode(uint8_t(llama[i])))), "");
  }
  EXPECT_EQ(dec.push(*tok->token_id(utf8::byte_to_unicode(uint8_t(llama.back())))), llama);
  EXPECT_EQ(dec.flush(), "");
}

TEST(StreamGpt2, FlushReplacesATruncatedTail) {
  BATON_REQUIRE_TOKENIZER(tok, vocab_path("gpt-2"));
  StreamDecoder dec(*tok);
  EXPECT_EQ(dec.push(*tok->token_id("a")), "a");
  EXPECT_EQ(dec.push(*tok->token_id(utf8::byte_to_unicode(0xF0))), "");
  EXPECT_EQ(dec.push(*tok->token_id(utf8::byte_to_unicode(0x9F))), "");
  EXPECT_EQ(dec.flush(), "\xEF\xBF\xBD");
  // An ill-formed byte comes out at once; it cannot become valid later.
  EXPECT_EQ(dec.push(*tok->token_id(utf8::byte_to_unicode(0x80))), "\xEF\xBF\xBD");
}

TEST(StreamGpt2, SpecialTokensFollowSkipSpecial) {
  BATON_REQUIRE_TOKENIZER(tok, vocab_path("gpt-2"));
  const auto ids = tok->encode("hi<|endoftext|>", false, true);
  ASSERT_EQ(ids.back(), 50256);
  EXPECT_EQ(stream(*tok, ids, true).text, "hi");
  EXPECT_EQ(stream(*tok, ids, false).text, "hi<|endoftext|>");
}

TEST(StreamSpm, LeadingSpaceDroppedLikeDecode) {
  BATON_REQUIRE_TOKENIZER(tok, vocab_path("llama-spm"));
  const auto ids = tok->encode("Hello world", true);
  ASSERT_EQ(ids.front(), tok->bos_id());
  StreamDecoder dec(*tok);
  EXPECT_EQ(dec.push(ids[0]), "");
  EXPECT_EQ(dec.push(ids[1]), "Hello");
  EXPECT_EQ(dec.push(ids[2]), " world");
}

TEST(SanitizeUtf8, MaximalSubpartsBecomeOneReplacementEach) {
  EXPECT_EQ(sanitize_utf8("a\xE2\x82"
                          "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(sanitize_utf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong: two
  EXPECT_EQ(sanitize_utf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(sanitize_utf8("é🦙"), "é🦙");
}

}  // namespace
}  // namespace baton::tokenizer
