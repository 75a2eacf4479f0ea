// Tokenizers built from GGUF metadata: a byte vocabulary written here with GgufWriter, the real
// stories260K and Llama-2 vocabularies, special tokens of the shared vocabularies, and the
// errors for vocabularies baton does not support.
#include <gtest/gtest.h>

#include "gguf/gguf_writer.h"
#include "tok_test_util.h"

namespace baton::tokenizer {
namespace {

using testing::vocab_path;

// <unk> <s> </s> and <0x00>..<0xFF> only: the smallest SentencePiece vocabulary that can spell
// any text.
gguf::GgufWriter byte_vocab_writer() {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<int32_t> types = {2, 3, 3};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    tokens.push_back(name);
    types.push_back(6);
  }
  gguf::GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.set_string("tokenizer.ggml.model", "llama");
  w.set_strings("tokenizer.ggml.tokens", tokens);
  w.set_f32s("tokenizer.ggml.scores", std::vector<float>(tokens.size(), 0.0f));
  w.set_i32s("tokenizer.ggml.token_type", types);
  w.set_u32("tokenizer.ggml.unknown_token_id", 0);
  w.set_u32("tokenizer.ggml.bos_token_id", 1);
  w.set_u32("tokenizer.ggml.eos_token_id", 2);
  return w;
}

std::unique_ptr<Tokenizer> load(const gguf::GgufWriter& w, const std::string& name) {
  const auto path = (::baton::testing::scratch_dir() / name).string();
  w.write(path);
  auto f = gguf::GgufFile::open(path);
  return Tokenizer::from_gguf(*f);
}

TEST(ByteVocab, EncodesEveryByteAndRoundTrips) {
  auto tok = load(byte_vocab_writer(), "bytes.gguf");
  EXPECT_EQ(tok->n_vocab(), 259);
  EXPECT_EQ(tok->bos_id(), 1);
  EXPECT_EQ(tok->eos_id(), 2);
  EXPECT_TRUE(tok->add_bos());
  EXPECT_TRUE(tok->is_eog(2));
  // Spaces (including the prefix one) are spelled <0x20>; the rest byte by byte.
  EXPECT_EQ(tok->encode("hé", true),
            (std::vector<int32_t>{1, 3 + ' ', 3 + 'h', 3 + 0xC3, 3 + 0xA9}));
  for (std::string text : {"héllo 🦙 wörld", "  two\n\tlines  ", "", "\xff\x80 raw"}) {
    EXPECT_EQ(tok->decode(tok->encode(text, true)), text);
  }
  StreamDecoder dec(*tok);
  std::string out;
  for (int32_t id : tok->encode("a🦙b", true)) {
    const auto piece = dec.push(id);
    EXPECT_TRUE(testing::valid_utf8(piece));
    out += piece;
  }
  EXPECT_EQ(out + dec.flush(), "a🦙b");
}

TEST(ByteVocab, AddBosAndSpacePrefixKeysAreHonoured) {
  auto w = byte_vocab_writer();
  w.set_bool("tokenizer.ggml.add_bos_token", false);
  w.set_bool("tokenizer.ggml.add_eos_token", true);
  w.set_bool("tokenizer.ggml.add_space_prefix", false);
  auto tok = load(w, "flags.gguf");
  EXPECT_FALSE(tok->add_bos());
  EXPECT_TRUE(tok->add_eos());
  EXPECT_EQ(tok->encode("a", false), (std::vector<int32_t>{3 + 'a'}));
}

TEST(GgufErrors, UnsupportedModelsAreNamed) {
  auto w = byte_vocab_writer();
  w.set_string("tokenizer.ggml.model", "t5");
  try {
    load(w, "t5.gguf");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("\"t5\""), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gpt2"), std::string::npos) << e.what();
  }
  gguf::GgufWriter bare;
  bare.set_string("general.architecture", "llama");
  EXPECT_THROW(load(bare, "bare.gguf"), std::runtime_error);
}

TEST(GgufErrors, UnknownPreNamesTheValue) {
  gguf::GgufWriter w;
  w.set_string("tokenizer.ggml.model", "gpt2");
  w.set_string("tokenizer.ggml.pre", "mystery-pre");
  w.set_strings("tokenizer.ggml.tokens", {"a", "b", "ab"});
  w.set_strings("tokenizer.ggml.merges", {"a b"});
  try {
    load(w, "pre.gguf");
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("mystery-pre"), std::string::npos) << e.what();
  }
}

TEST(GgufErrors, BertIsReportedAsUnsupportedWordPiece) {
  BATON_REQUIRE_SHARED(path, vocab_path("bert-bge"));
  auto f = gguf::GgufFile::open(path.string());
  try {
    Tokenizer::from_gguf(*f);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("WordPiece"), std::string::npos) << e.what();
  }
}

TEST(Stories260K, PromptAndGoldenTextMatch) {
  BATON_REQUIRE_TOKENIZER(tok, "models/stories260K.gguf");
  EXPECT_EQ(tok->n_vocab(), 512);
  // Ids 403 ▁Once, 407 ▁upon, 261 ▁a, 378 ▁time (models/PROVENANCE.md, golden greedy output).
  EXPECT_EQ(tok->encode("Once upon a time", true), (std::vector<int32_t>{1, 403, 407, 261, 378}));
  const std::vector<int32_t> golden = {403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421,
                                       395, 317, 426, 338, 401, 396, 267, 337, 410, 408, 419, 292,
                                       411, 322, 265, 282, 295, 433, 426, 385, 328, 432, 358, 394,
                                       261, 370, 432, 352, 266, 268, 388, 426, 338, 391, 266, 267,
                                       337, 335, 312, 432, 398, 312, 286, 267, 414, 270, 333, 415};
  std::vector<int32_t> with_bos = {1};
  with_bos.insert(with_bos.end(), golden.begin(), golden.end());
  EXPECT_EQ(tok->decode(with_bos),
            "Once upon a time, there was a little girl named Lily. She loved to play outside in "
            "the park. One day, she saw a big, red ball. She wanted to play with it, but it was "
            "too high");
  EXPECT_EQ(tok->token_to_piece(13), "\n");  // <0x0A>
}

TEST(Llama2Vocab, SameIdsAsTheLlamaSpmVectors) {
  BATON_REQUIRE_TOKENIZER(tiny, "models/llama-2-tiny-random.gguf");
  BATON_REQUIRE_TOKENIZER(spm, vocab_path("llama-spm"));
  for (std::string text : {"Hello world", " 多语言 🦙", "I'm   fine\n\n"}) {
    EXPECT_EQ(tiny->encode(text, true), spm->encode(text, true)) << text;
  }
}

TEST(SpecialTokens, Phi3ChatTokens) {
  BATON_REQUIRE_TOKENIZER(tok, vocab_path("phi-3"));
  const int32_t end = *tok->token_id("<|end|>");
  EXPECT_EQ(end, 32007);
  EXPECT_EQ(tok->eot_id(), end);  // detected by its text
  EXPECT_TRUE(tok->is_eog(end));
  EXPECT_TRUE(tok->is_eog(tok->eos_id()));
  EXPECT_FALSE(tok->is_eog(*tok->token_id("▁Hello")));
  const auto on = tok->encode("<|user|>\nHi<|end|>", false, true);
  EXPECT_EQ(on.front(), *tok->token_id("<|user|>"));
  EXPECT_EQ(on.back(), end);
  const auto off = tok->encode("<|user|>\nHi<|end|>", false, false);
  EXPECT_EQ(std::count(off.begin(), off.end(), end), 0);
  EXPECT_EQ(tok->decode(off), "<|user|>\nHi<|end|>");
  EXPECT_EQ(tok->decode(on, false), "<|user|>\nHi<|end|>");
}

TEST(SpecialTokens, StarcoderLongestMatchFirst) {
  BATON_REQUIRE_TOKENIZER(tok, vocab_path("starcoder"));
  const auto ids = tok->encode("<fim_prefix>def f():<fim_suffix><fim_middle>", false, true);
  EXPECT_EQ(ids.front(), *tok->token_id("<fim_prefix>"));
  EXPECT_EQ(ids[ids.size() - 2], *tok->token_id("<fim_suffix>"));
  EXPECT_EQ(ids.back(), *tok->token_id("<fim_middle>"));
  EXPECT_TRUE(tok->is_control(ids.back()));
  EXPECT_EQ(tok->decode(ids, false), "<fim_prefix>def f():<fim_suffix><fim_middle>");
  EXPECT_EQ(tok->decode(ids, true), "def f():");
}

TEST(SpecialTokens, MetadataIds) {
  BATON_REQUIRE_TOKENIZER(gpt2, vocab_path("gpt-2"));
  EXPECT_EQ(gpt2->bos_id(), 50256);
  EXPECT_EQ(gpt2->eos_id(), 50256);
  EXPECT_FALSE(gpt2->add_bos());
  EXPECT_EQ(gpt2->model(), Model::Bpe);
  BATON_REQUIRE_TOKENIZER(llm, vocab_path("deepseek-llm"));
  EXPECT_EQ(llm->bos_id(), 100000);
  EXPECT_EQ(llm->eos_id(), 100001);
  EXPECT_EQ(llm->encode("hi", true).front(), 100000);
  BATON_REQUIRE_TOKENIZER(spm, vocab_path("llama-spm"));
  EXPECT_EQ(spm->eot_id(), -1);
  EXPECT_EQ(spm->unk_id(), 0);
  EXPECT_TRUE(spm->add_bos());
  EXPECT_FALSE(spm->add_eos());
}

TEST(SpecialTokens, MissingPreUsesTheDefaultList) {
  BATON_REQUIRE_TOKENIZER(neox, vocab_path("gpt-neox"));
  EXPECT_EQ(neox->pre(), "");
  EXPECT_EQ(neox->decode(neox->encode("a+b=3,14", false)), "a+b=3,14");
}

}  // namespace
}  // namespace baton::tokenizer
