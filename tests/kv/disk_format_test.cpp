#include "kv/disk_format.h"

#include <gtest/gtest.h>

#include "kv/disk_test_util.h"

namespace baton::kv {
namespace {

SegmentHeader sample() {
  SegmentHeader h;
  h.layout = testing::test_layout();
  h.blocks = testing::chain(h.layout, 3, 100);
  for (size_t i = 0; i < h.blocks.size(); ++i) h.blocks[i].data_checksum = 1000 + i;
  return h;
}

DiskError error_of(const std::vector<uint8_t>& bytes) {
  try {
    parse_header(bytes);
  } catch (const DiskFormatError& e) {
    return e.kind;
  }
  ADD_FAILURE() << "parse_header accepted a broken header";
  return DiskError::Io;
}

TEST(DiskFormat, HeaderRoundTrips) {
  const SegmentHeader h = sample();
  const auto bytes = encode_header(h);
  const SegmentHeader back = parse_header(bytes);
  EXPECT_EQ(back.layout, h.layout);
  EXPECT_EQ(back.header_bytes, bytes.size());
  ASSERT_EQ(back.blocks.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(back.blocks[i].hash, h.blocks[i].hash);
    EXPECT_EQ(back.blocks[i].parent, h.blocks[i].parent);
    EXPECT_EQ(back.blocks[i].data_checksum, h.blocks[i].data_checksum);
    EXPECT_EQ(back.blocks[i].tokens, h.blocks[i].tokens);
  }
  EXPECT_EQ(back.file_bytes(), bytes.size() + 3 * h.layout.block_bytes);
}

TEST(DiskFormat, EveryDamagedHeaderIsRefusedWithItsKind) {
  const auto good = encode_header(sample());
  auto magic = good;
  magic[0] = 'X';
  EXPECT_EQ(error_of(magic), DiskError::BadMagic);
  auto version = good;
  version[8] = 99;
  EXPECT_EQ(error_of(version), DiskError::Version);
  for (size_t cut : {size_t{0}, size_t{10}, size_t{16}, good.size() / 2, good.size() - 1}) {
    EXPECT_EQ(error_of({good.begin(), good.begin() + static_cast<ptrdiff_t>(cut)}),
              DiskError::Truncated)
        << "cut at " << cut;
  }
  // Every single flipped byte past the preamble is caught by the header checksum.
  for (size_t i = kDiskPreambleBytes; i < good.size(); ++i) {
    auto bad = good;
    bad[i] ^= 0x40;
    EXPECT_EQ(error_of(bad), DiskError::Checksum) << "byte " << i;
  }
  auto huge = good;
  huge[12] = huge[13] = huge[14] = huge[15] = 0xFF;  // header_bytes of 4 GB
  EXPECT_EQ(error_of(huge), DiskError::Truncated);
}

TEST(DiskFormat, TokensMustFillTheBlock) {
  SegmentHeader h = sample();
  h.blocks[1].tokens.pop_back();
  EXPECT_THROW(encode_header(h), std::logic_error);
}

}  // namespace
}  // namespace baton::kv
