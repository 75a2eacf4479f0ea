// The reader against the real files in ../shared: v1 refusal, v3 llama, F16 tensors, vocabs.
#include <gtest/gtest.h>

#include <filesystem>

#include "gguf/gguf_file.h"
#include "support/shared_files.h"

namespace baton::gguf {
namespace {

TEST(GgufReader, RefusesVersion1WithAdvice) {
  BATON_REQUIRE_SHARED(path, "models/tinyllamas-stories-260k-f32.gguf");
  try {
    GgufFile::open(path.string());
    FAIL() << "version 1 must be refused";
  } catch (const GgufError& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("version 1 is not supported"), std::string::npos) << msg;
    EXPECT_NE(msg.find("re-convert"), std::string::npos) << msg;
    EXPECT_NE(msg.find("tinyllamas-stories-260k-f32.gguf"), std::string::npos) << msg;
  }
}

TEST(GgufReader, OpensStories260K) {
  BATON_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto f = GgufFile::open(path.string());
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(f->tensors().size(), 48u);
  EXPECT_EQ(f->metadata().size(), 19u);
  EXPECT_EQ(f->get_string("general.architecture"), "llama");
  EXPECT_EQ(f->get_int("llama.embedding_length"), 64);
  EXPECT_EQ(f->alignment(), 32u);
  EXPECT_EQ(f->data_offset() % 32, 0u);
  const TensorInfo* emb = f->find_tensor("token_embd.weight");
  ASSERT_NE(emb, nullptr);
  EXPECT_EQ(emb->dims[0], 64u);
  EXPECT_EQ(emb->n_elements, emb->dims[0] * emb->dims[1]);
  EXPECT_EQ(f->get_strings("tokenizer.ggml.tokens").size(), emb->dims[1]);
  EXPECT_EQ(f->find_tensor("no.such.tensor"), nullptr);
  uint64_t end = 0;
  for (const auto& t : f->tensors()) end = std::max(end, f->data_offset() + t.offset + t.n_bytes);
  EXPECT_LE(end, f->file_size());
}

TEST(GgufReader, TypedGettersNameTheKey) {
  BATON_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto f = GgufFile::open(path.string());
  EXPECT_EQ(f->get_int_or("no.such.key", 7), 7);
  EXPECT_EQ(f->get_string_or("no.such.key", "x"), "x");
  EXPECT_DOUBLE_EQ(f->get_float("llama.embedding_length"), 64.0);
  try {
    f->get_int("general.architecture");
    FAIL();
  } catch (const GgufError& e) {
    EXPECT_NE(std::string(e.what()).find("general.architecture"), std::string::npos);
  }
  EXPECT_THROW(f->get_string("missing.key"), GgufError);
  EXPECT_THROW(f->get_floats("tokenizer.ggml.tokens"), GgufError);
}

TEST(GgufReader, OpensLlama2TinyRandomWithF16Tensors) {
  BATON_REQUIRE_SHARED(path, "models/llama-2-tiny-random.gguf");
  auto f = GgufFile::open(path.string());
  size_t f16 = 0;
  for (const auto& t : f->tensors()) {
    if (t.type == TensorType::F16) {
      ++f16;
      EXPECT_EQ(t.n_bytes, t.n_elements * 2) << t.name;
    }
  }
  EXPECT_GT(f16, 0u);
  EXPECT_EQ(f->get_string("general.architecture"), "llama");
}

TEST(GgufReader, OpensEveryVocabFile) {
  auto dir = testing::shared_file("models/vocab");
  if (dir.empty()) GTEST_SKIP() << "needs ../shared/models/vocab (set BATON_SHARED_DIR to run)";
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".gguf") continue;
    SCOPED_TRACE(e.path().string());
    auto f = GgufFile::open(e.path().string());
    EXPECT_FALSE(f->get_strings("tokenizer.ggml.tokens").empty());
    EXPECT_FALSE(f->get_string("tokenizer.ggml.model").empty());
    ++n;
  }
  EXPECT_GE(n, 10u);
}

TEST(GgufReader, MissingFileNamesThePath) {
  try {
    GgufFile::open("/nonexistent/dir/model.gguf");
    FAIL();
  } catch (const GgufError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir/model.gguf"), std::string::npos);
  }
}

}  // namespace
}  // namespace baton::gguf
