// Writer round trips: write -> read gives the same metadata and the same tensor bytes.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gguf/gguf_info.h"
#include "gguf_test_util.h"
#include "support/shared_files.h"

namespace baton::gguf {
namespace {

TEST(GgufWriter, RoundTripsEveryValueKind) {
  GgufWriter w;
  w.set_string("s", "héllo\n");
  w.set_u32("u32", 4000000000u);
  w.set_i32("i32", -7);
  w.set_u64("u64", 1ull << 40);
  w.set_f32("f32", 0.25f);
  w.set_bool("yes", true);
  w.set_strings("strs", {"", "x", "yz"});
  w.set_f32s("floats", {1.5f, -2.0f});
  w.set_i32s("ints", {-1, 0, 1});
  MetaValue nested;
  nested.type = ValueType::ARRAY;
  nested.array_type = ValueType::ARRAY;
  MetaValue inner;
  inner.type = ValueType::ARRAY;
  inner.array_type = ValueType::UINT64;
  inner.uints = {1, ~0ull};
  nested.nested = {inner, inner};
  w.set_value("nested", nested);
  w.set_u32("u32", 5);  // setting a key again replaces it in place
  auto path = testing::scratch_dir() / "kinds.gguf";
  w.write(path.string());
  auto f = GgufFile::open(path.string());
  ASSERT_EQ(f->metadata().size(), 10u);
  EXPECT_EQ(f->metadata()[1].first, "u32");
  EXPECT_EQ(f->get_string("s"), "héllo\n");
  EXPECT_EQ(f->get_int("u32"), 5);
  EXPECT_EQ(f->get_int("i32"), -7);
  EXPECT_EQ(f->get_int("u64"), 1ll << 40);
  EXPECT_EQ(f->find("u64")->type, ValueType::UINT64);
  EXPECT_DOUBLE_EQ(f->get_float("f32"), 0.25);
  EXPECT_TRUE(f->get_bool_or("yes", false));
  EXPECT_EQ(f->get_strings("strs"), (std::vector<std::string>{"", "x", "yz"}));
  EXPECT_EQ(f->get_floats("floats"), (std::vector<double>{1.5, -2.0}));
  EXPECT_EQ(f->get_ints("ints"), (std::vector<int64_t>{-1, 0, 1}));
  const MetaValue* n = f->find("nested");
  ASSERT_NE(n, nullptr);
  ASSERT_EQ(n->nested.size(), 2u);
  EXPECT_EQ(n->nested[1].uints, (std::vector<uint64_t>{1, ~0ull}));
  EXPECT_THROW(f->get_ints("nested"), GgufError);
  EXPECT_EQ(
      n->to_display(),
      "[[1, 18446744073709551615] (2 x u64), [1, 18446744073709551615] (2 x u64)] (2 x array)");
}

TEST(GgufWriter, TensorsAreAlignedPaddedWithZerosAndIdentical) {
  auto w = test::small_writer();
  auto bytes = w.serialize();
  auto f = GgufFile::from_memory(bytes.data(), bytes.size());
  EXPECT_EQ(f->version(), 3u);
  EXPECT_EQ(bytes.size() % 32, 0u);
  const TensorInfo* a = f->find_tensor("a.weight");
  const TensorInfo* b = f->find_tensor("b.weight");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->n_bytes, 64u);
  EXPECT_EQ(b->n_bytes, 34u);
  EXPECT_EQ(b->offset, 64u);
  for (size_t k = 0; k < 64; ++k) EXPECT_EQ(f->tensor_data(*a)[k], k);
  for (size_t k = 0; k < 34; ++k) EXPECT_EQ(f->tensor_data(*b)[k], 100 + k);
  for (size_t k = 34; k < 64; ++k) EXPECT_EQ(f->tensor_data(*b)[k], 0) << "padding byte " << k;
}

TEST(GgufWriter, StreamingTensorEqualsBuffered) {
  GgufWriter buffered, streamed;
  std::vector<uint8_t> data(3 * 34);
  for (size_t k = 0; k < data.size(); ++k) data[k] = static_cast<uint8_t>(k * 7);
  buffered.add_tensor("t", TensorType::Q8_0, {96}, data);
  streamed.add_tensor("t", TensorType::Q8_0, {96}, [&](uint8_t* dst, size_t n) {
    ASSERT_EQ(n, data.size());
    std::copy(data.begin(), data.end(), dst);
  });
  EXPECT_EQ(buffered.serialize(), streamed.serialize());
}

TEST(GgufWriter, RejectsBadTensors) {
  GgufWriter w;
  EXPECT_THROW(w.add_tensor("x", TensorType::F32, {4}, std::vector<uint8_t>(15)), GgufError);
  EXPECT_THROW(w.add_tensor("x", TensorType::Q8_0, {31}, std::vector<uint8_t>(34)), GgufError);
  EXPECT_THROW(w.add_tensor("x", TensorType::F32, {0}, std::vector<uint8_t>()), GgufError);
  EXPECT_THROW(w.add_tensor("", TensorType::F32, {1}, std::vector<uint8_t>(4)), GgufError);
}

TEST(GgufWriter, AtomicWriteLeavesNoTempAndNamesBadPaths) {
  auto dir = testing::scratch_dir();
  auto w = test::small_writer();
  w.write((dir / "m.gguf").string());
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1u);
  try {
    w.write((dir / "missing-dir" / "m.gguf").string());
    FAIL();
  } catch (const GgufError& e) {
    EXPECT_NE(std::string(e.what()).find("missing-dir"), std::string::npos) << e.what();
  }
}

TEST(GgufWriter, RealFileRoundTrip) {
  BATON_REQUIRE_SHARED(path, "models/stories260K.gguf");
  auto src = GgufFile::open(path.string());
  GgufWriter w;
  w.copy_metadata(*src, "");
  for (const auto& t : src->tensors()) {
    const uint8_t* p = src->tensor_data(t);
    w.add_tensor(t.name, t.type, t.dims, std::vector<uint8_t>(p, p + t.n_bytes));
  }
  auto out = testing::scratch_dir() / "copy.gguf";
  w.write(out.string());
  auto copy = GgufFile::open(out.string());
  ASSERT_EQ(copy->metadata().size(), src->metadata().size());
  for (size_t k = 0; k < src->metadata().size(); ++k) {
    EXPECT_EQ(copy->metadata()[k].first, src->metadata()[k].first);
    EXPECT_EQ(copy->metadata()[k].second.to_display(1u << 20),
              src->metadata()[k].second.to_display(1u << 20))
        << src->metadata()[k].first;
  }
  ASSERT_EQ(copy->tensors().size(), src->tensors().size());
  for (const auto& t : src->tensors()) {
    const TensorInfo* c = copy->find_tensor(t.name);
    ASSERT_NE(c, nullptr) << t.name;
    EXPECT_EQ(c->dims, t.dims);
    EXPECT_EQ(c->type, t.type);
    EXPECT_EQ(0, std::memcmp(copy->tensor_data(*c), src->tensor_data(t), t.n_bytes)) << t.name;
  }
  // The converter wrote the same layout, so the files are byte-identical.
  std::ifstream a(path, std::ios::binary), b(out, std::ios::binary);
  std::string sa((std::istreambuf_iterator<char>(a)), {}),
      sb((std::istreambuf_iterator<char>(b)), {});
  EXPECT_EQ(sa == sb, true) << "sizes " << sa.size() << " vs " << sb.size();
}

}  // namespace
}  // namespace baton::gguf
