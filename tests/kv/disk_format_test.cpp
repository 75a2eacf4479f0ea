#include "kv/disk_format.h"

#include <gtest/gtest.h>

#include <cstring>

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

// Blocks carrying state checkpoints: the flags and checksums read back, and each checkpoint
// lies after every block's KV data, in block order.
TEST(DiskFormat, StateCheckpointsRoundTripAndFollowTheData) {
  SegmentHeader h = sample();
  h.layout.state_bytes = 1000;
  h.blocks[0].has_state = true;
  h.blocks[0].state_checksum = 7;
  h.blocks[2].has_state = true;
  h.blocks[2].state_checksum = 9;
  const auto bytes = encode_header(h);
  const SegmentHeader back = parse_header(bytes);
  EXPECT_EQ(back.layout, h.layout);
  EXPECT_EQ(back.layout.state_bytes, 1000u);
  EXPECT_TRUE(back.blocks[0].has_state);
  EXPECT_FALSE(back.blocks[1].has_state);
  EXPECT_TRUE(back.blocks[2].has_state);
  EXPECT_EQ(back.blocks[0].state_checksum, 7u);
  EXPECT_EQ(back.blocks[2].state_checksum, 9u);
  const uint64_t data_end = bytes.size() + 3 * h.layout.block_bytes;
  EXPECT_EQ(back.state_offset(0), data_end);
  EXPECT_EQ(back.state_offset(2), data_end + 1000);
  EXPECT_EQ(back.file_bytes(), data_end + 2000);
  // A layout without state has no room for one.
  h.layout.state_bytes = 0;
  EXPECT_THROW(encode_header(h), std::logic_error);
}

TEST(DiskFormat, EveryDamagedHeaderIsRefusedWithItsKind) {
  const auto good = encode_header(sample());
  auto magic = good;
  magic[0] = 'X';
  EXPECT_EQ(error_of(magic), DiskError::BadMagic);
  auto version = good;
  version[8] = 99;
  EXPECT_EQ(error_of(version), DiskError::Version);
  version[8] = 1;  // the format before state checkpoints: refused, its blocks are recomputed
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

// `bytes` with the field at `offset` set to `v` and the header checksum made right again: what a
// hostile writer produces, which the checksum alone cannot catch.
template <typename T>
std::vector<uint8_t> with_field(std::vector<uint8_t> bytes, size_t offset, T v) {
  std::memcpy(bytes.data() + offset, &v, sizeof(v));
  const uint64_t sum = block_checksum({bytes.data(), bytes.size() - sizeof(uint64_t)});
  std::memcpy(bytes.data() + bytes.size() - sizeof(sum), &sum, sizeof(sum));
  return bytes;
}

// Field offsets: fingerprint 16, block_size 24, n_blocks 28, block_bytes 32, layout_len 40.
TEST(DiskFormat, CountsAndSizesAreCheckedBeforeAnythingIsAllocated) {
  const auto good = encode_header(sample());
  ASSERT_NO_THROW(parse_header(with_field(good, 28, uint32_t{3})));
  // 2^32-1 blocks would be ~200 GB of blocks, 50M about 2.3 GB: both are refused from the
  // header's own length, before a block is allocated (a bad_alloc would fail the test).
  for (uint32_t n : {0xFFFFFFFFu, 50'000'000u, 257u, 4u, 2u, 0u}) {
    EXPECT_EQ(error_of(with_field(good, 28, n)), DiskError::Truncated) << n << " blocks";
  }
  EXPECT_EQ(error_of(with_field(good, 24, uint32_t{4097})), DiskError::Layout) << "block size";
  EXPECT_EQ(error_of(with_field(good, 24, uint32_t{0xFFFFFFFF})), DiskError::Layout);
  EXPECT_EQ(error_of(with_field(good, 32, uint64_t{1} << 41)), DiskError::Layout) << "block bytes";
  EXPECT_EQ(error_of(with_field(good, 32, ~uint64_t{0})), DiskError::Layout);
  EXPECT_EQ(error_of(with_field(good, 40, uint32_t{0xFFFFFFF0})), DiskError::Layout)
      << "layout length";
  // A header length over what any segment can have is refused from the preamble alone.
  EXPECT_EQ(error_of(with_field(good, 12, static_cast<uint32_t>(kMaxDiskHeaderBytes + 1))),
            DiskError::Truncated);
}

// The state flag is 0 or 1, and 1 only where the layout has checkpoints: anything else is
// refused even with a correct checksum.
TEST(DiskFormat, AStateFlagTheLayoutDoesNotAllowIsRefused) {
  SegmentHeader h = sample();
  const auto good = encode_header(h);
  // The first block's flag follows the layout string, state_bytes and 4 u64 fields.
  const size_t flag = 44 + h.layout.layout.size() + 8 + 32;
  EXPECT_EQ(error_of(with_field(good, flag, uint32_t{1})), DiskError::Layout) << "no state room";
  h.layout.state_bytes = 64;
  const auto roomy = encode_header(h);
  ASSERT_NO_THROW(parse_header(with_field(roomy, flag, uint32_t{1})));
  EXPECT_EQ(error_of(with_field(roomy, flag, uint32_t{2})), DiskError::Layout);
  const size_t state_bytes = 44 + h.layout.layout.size();
  EXPECT_EQ(error_of(with_field(roomy, state_bytes, ~uint64_t{0})), DiskError::Layout);
}

TEST(DiskFormat, TheWriterKeepsToTheReadersLimits) {
  SegmentHeader h = sample();
  h.blocks = testing::chain(h.layout, static_cast<int>(kMaxSegmentBlocks), 0);
  const auto full = encode_header(h);
  EXPECT_EQ(parse_header(full).blocks.size(), kMaxSegmentBlocks);
  h.blocks = testing::chain(h.layout, static_cast<int>(kMaxSegmentBlocks) + 1, 0);
  EXPECT_THROW(encode_header(h), std::logic_error);
  h = sample();
  h.layout.layout.assign(kMaxDiskLayoutBytes + 1, 'x');
  EXPECT_THROW(encode_header(h), std::logic_error);
}

TEST(DiskFormat, TokensMustFillTheBlock) {
  SegmentHeader h = sample();
  h.blocks[1].tokens.pop_back();
  EXPECT_THROW(encode_header(h), std::logic_error);
}

}  // namespace
}  // namespace baton::kv
