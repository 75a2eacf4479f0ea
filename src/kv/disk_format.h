#pragma once
// The on-disk form of a run of KV blocks (one segment file of the disk tier).
//
// Little-endian, in this order:
//   "BATONKVS"  u32 version  u32 header_bytes (everything up to the data, checksum included)
//   u64 fingerprint  u32 block_size  u32 n_blocks  u64 block_bytes  u32 layout_len  layout
//   u64 state_bytes (0 for a model without sequence state)
//   n_blocks × { u64 hash  u64 parent  u64 data_checksum  u64 state_checksum  u32 has_state
//                i32 tokens[block_size] }
//   u64 header_checksum (xxh3 of every header byte before it)
//   n_blocks × block_bytes of KV data, in block order
//   one state_bytes checkpoint for each block with has_state = 1, in block order
// Each block carries its own data checksum so a load reads only the blocks it needs and still
// proves every byte it uses. The header names the model (fingerprint) and the KV layout, so a
// file written by another model, block size or KV type is never mistaken for this one's.
//
// A model whose sequences keep state beside their KV blocks (a hybrid's recurrent state, a
// windowed layer's last W positions) can continue a prefix only from a checkpoint of that state
// taken where the prefix ends, so a block may carry the checkpoint taken at its end. Version 1
// files (no state) are refused as another version: a restart recomputes what they held.
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace baton::kv {

inline constexpr uint32_t kDiskFormatVersion = 2;
inline constexpr size_t kDiskPreambleBytes = 16;  // magic, version, header_bytes

// What a segment may hold. A header is checked against these (and against its own size) before
// anything is allocated for it, so a damaged or hostile file costs no more than a real one.
inline constexpr uint32_t kMaxSegmentBlocks = 256;
inline constexpr uint32_t kMaxDiskBlockSize = 4096;         // tokens per block
inline constexpr uint64_t kMaxDiskBlockBytes = 1ull << 40;  // so a file's size cannot overflow
inline constexpr uint32_t kMaxDiskLayoutBytes = 4096;
inline constexpr uint64_t kMaxDiskStateBytes = 1ull << 36;  // one checkpoint
// The largest header the limits above allow (about 4 MB).
inline constexpr uint64_t kMaxDiskHeaderBytes =
    kDiskPreambleBytes + 8 + 4 + 4 + 8 + 4 + kMaxDiskLayoutBytes + 8 +
    uint64_t{kMaxSegmentBlocks} * (4 * 8 + 4 + 4 * uint64_t{kMaxDiskBlockSize}) + 8;

// Why a file cannot be used; also the `kind` label of baton_kv_disk_errors_total.
enum class DiskError { Truncated, BadMagic, Version, Checksum, Model, Layout, Io };
const char* disk_error_name(DiskError e);

class DiskFormatError : public std::runtime_error {
 public:
  DiskFormatError(DiskError kind, const std::string& what) : std::runtime_error(what), kind(kind) {}
  DiskError kind;
};

struct DiskBlock {
  uint64_t hash = 0;    // chain hash naming the block (and the whole prefix before it)
  uint64_t parent = 0;  // chain hash of the block before it (the fingerprint for the first)
  uint64_t data_checksum = 0;
  bool has_state = false;  // the segment holds the state checkpoint taken at this block's end
  uint64_t state_checksum = 0;
  std::vector<int32_t> tokens;  // block_size of them
};

// What identifies a KV layout: a file is usable only when all of these match.
struct DiskLayout {
  uint64_t fingerprint = 0;
  uint32_t block_size = 0;
  uint64_t block_bytes = 0;
  std::string layout;        // e.g. "f16 layers=22 kv_heads=4 head_dim=64"
  uint64_t state_bytes = 0;  // one state checkpoint; 0: the model keeps no sequence state
  bool operator==(const DiskLayout&) const = default;
};

struct SegmentHeader {
  DiskLayout layout;
  std::vector<DiskBlock> blocks;
  uint64_t header_bytes = 0;  // offset of the first block's data
  uint64_t data_offset(size_t i) const { return header_bytes + i * layout.block_bytes; }
  // Where block i's state checkpoint starts (meaningful when blocks[i].has_state).
  uint64_t state_offset(size_t i) const;
  uint64_t file_bytes() const { return state_offset(blocks.size()); }
};

uint64_t block_checksum(std::span<const uint8_t> data);

// The header bytes for `h` (h.header_bytes is ignored and implied by the encoding). Throws
// std::logic_error when `h` exceeds a limit above (it could not be read back).
std::vector<uint8_t> encode_header(const SegmentHeader& h);

// Reads the preamble: the total header size, or throws DiskFormatError (BadMagic, Version,
// Truncated).
uint32_t parse_preamble(std::span<const uint8_t> bytes);
// Parses and checks a whole header (preamble included): every count and size in it must agree
// with the header's length and the limits above before anything is allocated. Throws
// DiskFormatError.
SegmentHeader parse_header(std::span<const uint8_t> bytes);

}  // namespace baton::kv
