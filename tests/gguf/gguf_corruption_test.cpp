// Hundreds of deterministic corruptions and truncations: the reader must either accept the
// bytes or throw GgufError; never crash, hang or read out of bounds (ASan builds check that).
#include <gtest/gtest.h>

#include <fstream>

#include "gguf_test_util.h"
#include "support/shared_files.h"

namespace baton::gguf {
namespace {

// Own generator so the corruptions are the same on every platform.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }
};

std::vector<uint8_t> corrupt(const std::vector<uint8_t>& src, size_t header_end, Rng& rng) {
  std::vector<uint8_t> b = src;
  static const uint64_t kValues[] = {0,
                                     1,
                                     2,
                                     3,
                                     4,
                                     31,
                                     33,
                                     255,
                                     0xffffffffull,
                                     1ull << 32,
                                     1ull << 62,
                                     ~0ull,
                                     0x8000000000000000ull};
  switch (rng.below(5)) {
    case 0:  // truncate, mostly inside the header
      b.resize(rng.below(4) ? rng.below(header_end + 1) : rng.below(b.size()));
      break;
    case 1:  // flip random header bits
      for (int k = 0, n = 1 + static_cast<int>(rng.below(4)); k < n; ++k) {
        b[rng.below(header_end)] ^= static_cast<uint8_t>(1u << rng.below(8));
      }
      break;
    case 2: {  // an interesting 64-bit value at a random header position
      size_t at = rng.below(header_end - 8);
      uint64_t v = kValues[rng.below(std::size(kValues))];
      std::memcpy(b.data() + at, &v, 8);
      break;
    }
    case 3: {  // an interesting 32-bit value
      size_t at = rng.below(header_end - 4);
      uint32_t v = static_cast<uint32_t>(kValues[rng.below(std::size(kValues))]);
      std::memcpy(b.data() + at, &v, 4);
      break;
    }
    default:  // random bytes over a small run
      for (size_t at = rng.below(header_end), k = 0; k < 16 && at + k < b.size(); ++k) {
        b[at + k] = static_cast<uint8_t>(rng.next());
      }
  }
  return b;
}

void run_corruptions(const std::vector<uint8_t>& src, int n, uint64_t seed) {
  auto f = GgufFile::from_memory(src.data(), src.size());
  size_t header_end = static_cast<size_t>(f->data_offset());
  ASSERT_GT(header_end, 16u);
  Rng rng{seed};
  int accepted = 0, refused = 0;
  for (int k = 0; k < n; ++k) {
    auto b = corrupt(src, header_end, rng);
    try {
      auto g = GgufFile::from_memory(b.data(), b.size(), "corrupt.gguf");
      // Whatever opened must be safe to walk.
      for (const auto& t : g->tensors()) {
        ASSERT_LE(g->data_offset() + t.offset + t.n_bytes, g->file_size()) << t.name;
      }
      ++accepted;
    } catch (const GgufError& e) {
      std::string msg = e.what();
      EXPECT_EQ(msg.rfind("corrupt.gguf: ", 0), 0u) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      ++refused;
    }
  }
  EXPECT_GT(refused, n / 4);  // the corruptions really hit validation
  ::testing::Test::RecordProperty("accepted", accepted);
}

TEST(GgufCorruption, SmallWrittenFile) {
  run_corruptions(test::small_file(), 400, 1);
}

TEST(GgufCorruption, Stories260K) {
  BATON_REQUIRE_SHARED(path, "models/stories260K.gguf");
  std::ifstream in(path, std::ios::binary);
  std::vector<uint8_t> src((std::istreambuf_iterator<char>(in)), {});
  run_corruptions(src, 300, 2);
}

}  // namespace
}  // namespace baton::gguf
