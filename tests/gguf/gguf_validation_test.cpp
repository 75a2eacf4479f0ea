// Every validation rule of the reader, triggered by patching bytes of a small valid file. Each
// message must name the file and the field.
#include <gtest/gtest.h>

#include "gguf_test_util.h"

namespace baton::gguf {
namespace {

using test::parse_error;
using test::poke;
using test::small_file;
using test::tensor_record;

#define EXPECT_GGUF_ERROR(bytes, field, what)                                           \
  do {                                                                                  \
    std::string msg = parse_error(bytes);                                               \
    EXPECT_NE(msg.find("broken.gguf: "), std::string::npos) << msg;                     \
    EXPECT_NE(msg.find(field), std::string::npos) << "field: " << field << "\n" << msg; \
    EXPECT_NE(msg.find(what), std::string::npos) << "want: " << what << "\n" << msg;    \
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line: " << msg;                \
  } while (0)

TEST(GgufValidation, SmallFileIsValid) {
  auto bytes = small_file();
  EXPECT_EQ(parse_error(bytes), "");
  auto f = GgufFile::from_memory(bytes.data(), bytes.size());
  EXPECT_EQ(f->tensors().size(), 3u);
}

TEST(GgufValidation, Magic) {
  auto b = small_file();
  b[0] = 'X';
  EXPECT_GGUF_ERROR(b, "magic", "'GGUF'");
}

TEST(GgufValidation, Version1IsRefused) {
  auto b = small_file();
  poke<uint32_t>(b, 4, 1);
  EXPECT_GGUF_ERROR(b, "version", "version 1 is not supported");
}

TEST(GgufValidation, BigEndianIsNamed) {
  auto b = small_file();
  poke<uint32_t>(b, 4, 0x03000000);
  EXPECT_GGUF_ERROR(b, "version", "big-endian");
}

TEST(GgufValidation, UnknownVersion) {
  auto b = small_file();
  poke<uint32_t>(b, 4, 4);
  EXPECT_GGUF_ERROR(b, "version", "2 or 3, got 4");
}

TEST(GgufValidation, Version2Reads) {
  auto b = small_file();
  poke<uint32_t>(b, 4, 2);
  EXPECT_EQ(parse_error(b), "");
}

TEST(GgufValidation, Counts) {
  auto b = small_file();
  poke<uint64_t>(b, 8, 1ull << 40);
  EXPECT_GGUF_ERROR(b, "tensor count", "at most");
  b = small_file();
  poke<uint64_t>(b, 16, 1ull << 40);
  EXPECT_GGUF_ERROR(b, "metadata count", "at most");
}

TEST(GgufValidation, KeyLengthIsCapped) {
  auto b = small_file();
  poke<uint64_t>(b, 24, 1ull << 50);  // first key's length
  EXPECT_GGUF_ERROR(b, "metadata key #0", "at most");
}

TEST(GgufValidation, ValueType) {
  auto b = small_file();
  size_t type_at = test::find_bytes(b, "general.architecture") + 20;
  poke<uint32_t>(b, type_at, 13);
  EXPECT_GGUF_ERROR(b, "metadata 'general.architecture' type", "0..12, got 13");
}

TEST(GgufValidation, StringLengthPastTheEnd) {
  auto b = small_file();
  size_t len_at = test::find_bytes(b, "general.architecture") + 24;
  poke<uint64_t>(b, len_at, b.size());
  EXPECT_GGUF_ERROR(b, "metadata 'general.architecture'", "truncated");
}

TEST(GgufValidation, ArrayLength) {
  auto b = small_file();
  size_t len_at = test::find_bytes(b, "tokenizer.ggml.tokens") + 21 + 8;
  poke<uint64_t>(b, len_at, 1ull << 60);
  EXPECT_GGUF_ERROR(b, "metadata 'tokenizer.ggml.tokens'", "at most");
  poke<uint64_t>(b, len_at, 1000000);
  EXPECT_GGUF_ERROR(b, "metadata 'tokenizer.ggml.tokens'", "truncated");
}

TEST(GgufValidation, BoolMustBe0Or1) {
  GgufWriter w = test::small_writer();
  w.set_bool("x.flag", true);
  auto b = w.serialize();
  size_t at = test::find_bytes(b, "x.flag") + 6 + 4;
  b[at] = 2;
  EXPECT_GGUF_ERROR(b, "metadata 'x.flag'", "a bool 0 or 1");
}

TEST(GgufValidation, DuplicateKey) {
  GgufWriter w = test::small_writer();
  w.set_u32("dup.keyA", 1);
  w.set_u32("dup.keyB", 2);
  auto b = w.serialize();
  b[test::find_bytes(b, "dup.keyB") + 7] = 'A';
  EXPECT_GGUF_ERROR(b, "metadata 'dup.keyA'", "appears twice");
}

TEST(GgufValidation, NDims) {
  auto b = small_file();
  auto r = tensor_record(b, "b.weight", 2);
  poke<uint32_t>(b, r.n_dims, 0);
  EXPECT_GGUF_ERROR(b, "tensor 'b.weight' n_dims", "1..4, got 0");
  poke<uint32_t>(b, r.n_dims, 5);
  EXPECT_GGUF_ERROR(b, "tensor 'b.weight' n_dims", "1..4, got 5");
}

TEST(GgufValidation, ZeroDim) {
  auto b = small_file();
  poke<uint64_t>(b, tensor_record(b, "a.weight", 2).dims + 8, 0);
  EXPECT_GGUF_ERROR(b, "tensor 'a.weight' dims", "non-zero");
}

TEST(GgufValidation, ElementCountOverflow) {
  auto b = small_file();
  auto r = tensor_record(b, "a.weight", 2);
  poke<uint64_t>(b, r.dims, 1ull << 40);
  poke<uint64_t>(b, r.dims + 8, 1ull << 40);
  EXPECT_GGUF_ERROR(b, "tensor 'a.weight' dims", "2^62");
}

TEST(GgufValidation, UnknownType) {
  auto b = small_file();
  poke<uint32_t>(b, tensor_record(b, "a.weight", 2).type, 99);
  EXPECT_GGUF_ERROR(b, "tensor 'a.weight' type", "known GGML type id, got 99");
  poke<uint32_t>(b, tensor_record(b, "a.weight", 2).type, 4);  // removed Q4_2
  EXPECT_GGUF_ERROR(b, "tensor 'a.weight' type", "got 4");
}

TEST(GgufValidation, RowNotAMultipleOfTheBlock) {
  auto b = small_file();
  poke<uint32_t>(b, tensor_record(b, "a.weight", 2).type, static_cast<uint32_t>(TensorType::Q4_K));
  EXPECT_GGUF_ERROR(b, "tensor 'a.weight' dims[0]", "multiple of 256");
}

TEST(GgufValidation, UnalignedOffset) {
  auto b = small_file();
  poke<uint64_t>(b, tensor_record(b, "c.weight", 1).offset, 100);
  EXPECT_GGUF_ERROR(b, "tensor 'c.weight' offset", "multiple of general.alignment (32)");
}

TEST(GgufValidation, TensorOutsideTheFile) {
  auto b = small_file();
  poke<uint64_t>(b, tensor_record(b, "c.weight", 1).offset, 1ull << 20);
  EXPECT_GGUF_ERROR(b, "tensor 'c.weight' offset", "inside the file");
  b = small_file();
  poke<uint64_t>(b, tensor_record(b, "c.weight", 1).offset, ~0ull << 5);
  EXPECT_GGUF_ERROR(b, "tensor 'c.weight' offset", "inside the file");
}

TEST(GgufValidation, Overlap) {
  auto b = small_file();
  poke<uint64_t>(b, tensor_record(b, "b.weight", 2).offset, 32);  // a.weight is 64 bytes at 0
  EXPECT_GGUF_ERROR(b, "tensor 'b.weight' offset", "no overlap with tensor 'a.weight'");
}

TEST(GgufValidation, DuplicateTensorName) {
  auto b = small_file();
  b[test::find_bytes(b, "b.weight")] = 'a';
  EXPECT_GGUF_ERROR(b, "tensor 'a.weight'", "unique");
}

TEST(GgufValidation, TensorNameLength) {
  GgufWriter w;
  w.add_tensor(std::string(300, 'n'), TensorType::F32, {1}, std::vector<uint8_t>(4));
  EXPECT_GGUF_ERROR(w.serialize(), "tensor #0 name", "at most 256");
}

TEST(GgufValidation, EmptyTensorName) {
  auto b = small_file();
  // Turn a.weight's name length into 0: its bytes are then read as n_dims etc. and must fail.
  poke<uint64_t>(b, test::find_bytes(b, "a.weight") - 8, 0);
  EXPECT_GGUF_ERROR(b, "tensor #0 name", "non-empty");
}

TEST(GgufValidation, AlignmentMustBeAPowerOfTwo) {
  GgufWriter w = test::small_writer();
  w.set_u32("general.alignment", 48);
  EXPECT_GGUF_ERROR(w.serialize(), "general.alignment", "power of two");
  w.set_u32("general.alignment", 0);
  EXPECT_GGUF_ERROR(w.serialize(), "general.alignment", "positive");
  w.set_string("general.alignment", "32");
  EXPECT_GGUF_ERROR(w.serialize(), "general.alignment", "integer");
}

TEST(GgufValidation, CustomAlignmentReads) {
  GgufWriter w = test::small_writer();
  w.set_u32("general.alignment", 64);
  auto b = w.serialize();
  auto f = GgufFile::from_memory(b.data(), b.size());
  EXPECT_EQ(f->alignment(), 64u);
  for (const auto& t : f->tensors()) EXPECT_EQ(t.offset % 64, 0u) << t.name;
  EXPECT_EQ(f->data_offset() % 64, 0u);
}

TEST(GgufValidation, Truncated) {
  auto b = small_file();
  // b.size() - 25 cuts the last byte of c.weight (8 bytes, then 24 bytes of padding).
  for (size_t cut : {size_t{0}, size_t{3}, size_t{7}, size_t{20}, size_t{60}, b.size() - 25}) {
    std::vector<uint8_t> t(b.begin(), b.begin() + cut);
    std::string msg = parse_error(t);
    EXPECT_NE(msg, "") << "cut at " << cut;
    EXPECT_EQ(msg.find('\n'), std::string::npos);
  }
  std::vector<uint8_t> t(b.begin(), b.begin() + 40);
  EXPECT_NE(parse_error(t).find("truncated"), std::string::npos) << parse_error(t);
}

TEST(GgufValidation, ControlBytesInNamesAreEscaped) {
  auto b = small_file();
  b[test::find_bytes(b, "b.weight") + 1] = '\n';
  poke<uint32_t>(b, tensor_record(b, std::string("b\n") + "weight", 2).type, 99);
  std::string msg = parse_error(b);
  EXPECT_NE(msg.find("b\\x0aweight"), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace baton::gguf
