#include "kv/disk_format.h"

#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <cstring>

namespace baton::kv {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the KV disk format is little-endian; a big-endian port needs byte swaps here");

constexpr char kMagic[8] = {'B', 'A', 'T', 'O', 'N', 'K', 'V', 'S'};

// A block's entry in the header: hash, parent, data and state checksums, the state flag, then
// its tokens.
uint64_t entry_bytes(uint32_t block_size) {
  return 4 * sizeof(uint64_t) + sizeof(uint32_t) + 4ull * block_size;
}

class Writer {
 public:
  template <typename T>
  void put(T v) {
    const auto* p = reinterpret_cast<const uint8_t*>(&v);
    out.insert(out.end(), p, p + sizeof(T));
  }
  void put_bytes(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  }
  std::vector<uint8_t> out;
};

class Reader {
 public:
  explicit Reader(std::span<const uint8_t> b) : bytes_(b) {}
  template <typename T>
  T get() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  std::string get_string(size_t n) {
    need(n);
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  size_t pos() const { return pos_; }
  size_t left() const { return bytes_.size() - pos_; }

 private:
  void need(size_t n) const {
    if (bytes_.size() - pos_ < n) {
      throw DiskFormatError(DiskError::Truncated, "segment header is truncated");
    }
  }
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
};

}  // namespace

const char* disk_error_name(DiskError e) {
  switch (e) {
    case DiskError::Truncated:
      return "truncated";
    case DiskError::BadMagic:
      return "bad_magic";
    case DiskError::Version:
      return "version";
    case DiskError::Checksum:
      return "checksum";
    case DiskError::Model:
      return "model";
    case DiskError::Layout:
      return "layout";
    case DiskError::Io:
      return "io";
  }
  return "io";
}

uint64_t SegmentHeader::state_offset(size_t i) const {
  const auto before = std::count_if(blocks.begin(), blocks.begin() + static_cast<ptrdiff_t>(i),
                                    [](const DiskBlock& b) { return b.has_state; });
  return data_offset(blocks.size()) + static_cast<uint64_t>(before) * layout.state_bytes;
}

uint64_t block_checksum(std::span<const uint8_t> data) {
  return XXH3_64bits(data.data(), data.size());
}

std::vector<uint8_t> encode_header(const SegmentHeader& h) {
  if (h.blocks.size() > kMaxSegmentBlocks || h.layout.block_size > kMaxDiskBlockSize ||
      h.layout.block_bytes > kMaxDiskBlockBytes || h.layout.layout.size() > kMaxDiskLayoutBytes ||
      h.layout.state_bytes > kMaxDiskStateBytes) {
    throw std::logic_error("kv disk: a segment over the format's limits would not read back");
  }
  Writer w;
  w.put_bytes(kMagic, sizeof(kMagic));
  w.put<uint32_t>(kDiskFormatVersion);
  w.put<uint32_t>(0);  // header_bytes, patched below
  w.put<uint64_t>(h.layout.fingerprint);
  w.put<uint32_t>(h.layout.block_size);
  w.put<uint32_t>(static_cast<uint32_t>(h.blocks.size()));
  w.put<uint64_t>(h.layout.block_bytes);
  w.put<uint32_t>(static_cast<uint32_t>(h.layout.layout.size()));
  w.put_bytes(h.layout.layout.data(), h.layout.layout.size());
  w.put<uint64_t>(h.layout.state_bytes);
  for (const auto& b : h.blocks) {
    if (b.has_state && h.layout.state_bytes == 0) {
      throw std::logic_error("kv disk: a block carries a state the layout has no room for");
    }
    w.put<uint64_t>(b.hash);
    w.put<uint64_t>(b.parent);
    w.put<uint64_t>(b.data_checksum);
    w.put<uint64_t>(b.has_state ? b.state_checksum : 0);
    w.put<uint32_t>(b.has_state ? 1 : 0);
    if (b.tokens.size() != h.layout.block_size) {
      throw std::logic_error("kv disk: a block's tokens do not fill the block size");
    }
    w.put_bytes(b.tokens.data(), b.tokens.size() * sizeof(int32_t));
  }
  const auto total = static_cast<uint32_t>(w.out.size() + sizeof(uint64_t));
  std::memcpy(w.out.data() + 12, &total, sizeof(total));
  w.put<uint64_t>(XXH3_64bits(w.out.data(), w.out.size()));
  return std::move(w.out);
}

uint32_t parse_preamble(std::span<const uint8_t> bytes) {
  if (bytes.size() < kDiskPreambleBytes) {
    throw DiskFormatError(DiskError::Truncated, "file is shorter than a segment preamble");
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    throw DiskFormatError(DiskError::BadMagic, "not a baton KV segment (bad magic)");
  }
  Reader r(bytes.subspan(8));
  const auto version = r.get<uint32_t>();
  if (version != kDiskFormatVersion) {
    throw DiskFormatError(DiskError::Version, "segment format version " + std::to_string(version) +
                                                  ", this build reads version " +
                                                  std::to_string(kDiskFormatVersion));
  }
  const auto header_bytes = r.get<uint32_t>();
  if (header_bytes < kDiskPreambleBytes + 8 || header_bytes > kMaxDiskHeaderBytes) {
    throw DiskFormatError(DiskError::Truncated,
                          "segment header size " + std::to_string(header_bytes) + " is invalid");
  }
  return header_bytes;
}

SegmentHeader parse_header(std::span<const uint8_t> bytes) {
  const uint32_t total = parse_preamble(bytes);
  if (bytes.size() < total) {
    throw DiskFormatError(DiskError::Truncated, "segment header is truncated");
  }
  uint64_t stored;
  std::memcpy(&stored, bytes.data() + total - sizeof(stored), sizeof(stored));
  if (XXH3_64bits(bytes.data(), total - sizeof(stored)) != stored) {
    throw DiskFormatError(DiskError::Checksum, "segment header checksum mismatch");
  }
  Reader r(bytes.first(total - sizeof(stored)));
  r.get_string(kDiskPreambleBytes);
  SegmentHeader h;
  h.layout.fingerprint = r.get<uint64_t>();
  h.layout.block_size = r.get<uint32_t>();
  const auto n_blocks = r.get<uint32_t>();
  h.layout.block_bytes = r.get<uint64_t>();
  const auto layout_len = r.get<uint32_t>();
  if (layout_len > kMaxDiskLayoutBytes) {
    throw DiskFormatError(DiskError::Layout, "segment header has an invalid layout length");
  }
  h.layout.layout = r.get_string(layout_len);
  h.layout.state_bytes = r.get<uint64_t>();
  if (h.layout.block_size == 0 || h.layout.block_size > kMaxDiskBlockSize ||
      h.layout.block_bytes == 0 || h.layout.block_bytes > kMaxDiskBlockBytes ||
      h.layout.state_bytes > kMaxDiskStateBytes) {
    throw DiskFormatError(DiskError::Layout, "segment header has an invalid block geometry");
  }
  // The block count must fill the header exactly before a block is allocated for it.
  if (n_blocks == 0 || n_blocks > kMaxSegmentBlocks ||
      uint64_t{n_blocks} * entry_bytes(h.layout.block_size) != r.left()) {
    throw DiskFormatError(DiskError::Truncated,
                          "segment header claims " + std::to_string(n_blocks) +
                              " blocks, which its size or the limit of " +
                              std::to_string(kMaxSegmentBlocks) + " does not allow");
  }
  h.blocks.resize(n_blocks);
  for (auto& b : h.blocks) {
    b.hash = r.get<uint64_t>();
    b.parent = r.get<uint64_t>();
    b.data_checksum = r.get<uint64_t>();
    b.state_checksum = r.get<uint64_t>();
    const auto has_state = r.get<uint32_t>();
    if (has_state > 1 || (has_state == 1 && h.layout.state_bytes == 0)) {
      throw DiskFormatError(DiskError::Layout,
                            "segment header has a block state flag its layout does not allow");
    }
    b.has_state = has_state == 1;
    b.tokens.resize(h.layout.block_size);
    for (auto& t : b.tokens) t = r.get<int32_t>();
  }
  if (r.pos() != total - sizeof(stored)) {
    throw DiskFormatError(DiskError::Truncated, "segment header has trailing bytes");
  }
  h.header_bytes = total;
  return h;
}

}  // namespace baton::kv
