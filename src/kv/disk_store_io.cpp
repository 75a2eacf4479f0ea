// DiskStore::save and DiskStore::load: the I/O itself, outside the index lock.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "kv/disk_store.h"
#include "util/posix_file.h"

namespace baton::kv {

using util::Fd;
using util::read_at;
using util::write_all;

bool DiskStore::save(std::vector<DiskBlock> blocks, std::span<const uint8_t* const> data,
                     std::span<const std::vector<uint8_t>> states) {
  if (blocks.empty() || data.size() != blocks.size() || blocks.size() > kMaxSegmentBlocks ||
      states.size() > blocks.size()) {
    return false;
  }
  const uint64_t bb = options_.layout.block_bytes;
  const uint64_t sb = options_.layout.state_bytes;
  for (size_t i = 0; i < blocks.size(); ++i) {
    blocks[i].data_checksum = block_checksum({data[i], bb});
    const bool has_state = i < states.size() && !states[i].empty();
    if (has_state && states[i].size() != sb) return false;  // not this layout's checkpoint
    blocks[i].has_state = has_state;
    blocks[i].state_checksum = has_state ? block_checksum(states[i]) : 0;
  }
  SegmentHeader h;
  h.layout = options_.layout;
  h.blocks = std::move(blocks);
  const std::vector<uint8_t> head = encode_header(h);
  h.header_bytes = head.size();
  const uint64_t total = h.file_bytes();
  if (total > options_.budget_bytes) return false;  // could never fit: not an error
  const std::string name = segment_file_name(h.layout.fingerprint, h.blocks.front().hash);
  std::vector<std::string> victims;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, f] : files_) {
      if (f.name == name) {
        victims = drop_file(id);  // superseded by this one
        break;
      }
    }
    for (auto& v : make_room(total)) victims.push_back(std::move(v));
  }
  remove_files(victims);

  // A fresh name, created exclusively: whatever already exists in the directory (a link
  // included) is never opened, truncated or written through.
  std::string tmp;
  bool created, ok;
  {
    Fd fd(dir_.create_unique(name + ".", ".tmp", tmp));
    created = fd.fd >= 0;
    ok = created && write_all(fd.fd, head.data(), head.size());
    for (size_t i = 0; ok && i < data.size(); ++i) ok = write_all(fd.fd, data[i], bb);
    for (size_t i = 0; ok && i < states.size(); ++i) {
      if (!states[i].empty()) ok = write_all(fd.fd, states[i].data(), sb);
    }
    ok = ok && ::fsync(fd.fd) == 0;
  }
  ok = ok && dir_.rename(tmp, name);
  if (!ok) {
    const int err = errno;
    if (created) dir_.remove(tmp);
    count_error(DiskError::Io, "writing " + name + ": " + std::strerror(err));
    return false;
  }
  dir_.sync();  // the rename is durable only once the directory entry is on disk too
  File f;
  f.name = name;
  f.bytes = total;
  f.ours = true;
  const size_t n = h.blocks.size();
  f.header = std::move(h);
  std::lock_guard<std::mutex> lock(mu_);
  add_file(std::move(f));
  stats_.saved_blocks += n;
  return true;
}

DiskStore::OpenFile::~OpenFile() {
  if (fd >= 0) ::close(fd);
}

// A load reads block by block, and one block's read at a time from a cold page cache waits on
// the disk for each readahead window in turn (about 0.5 GB/s here, against 4 GB/s when the
// whole range is asked for up front): so every file's range is advised first, and the kernel
// reads them all while the blocks are copied and checked in order.
std::map<uint32_t, DiskStore::OpenFile> DiskStore::open_for_load(
    std::span<const DiskBlock> expected, size_t limit) const {
  std::map<uint32_t, OpenFile> files;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t n = 0; n < expected.size() && n < limit; ++n) {
      auto it = index_.find(expected[n].hash);
      if (it == index_.end()) break;
      const File& f = files_.at(it->second.file);
      OpenFile& o = files[it->second.file];
      o.name = f.name;
      const uint64_t off = f.header.data_offset(it->second.slot);
      o.begin = std::min(o.begin, off);
      o.end = std::max(o.end, off + options_.layout.block_bytes);
    }
  }
  for (auto& [id, o] : files) {
    o.fd = dir_.open_read(o.name);
    if (o.fd >= 0) {
      ::posix_fadvise(o.fd, off_t(o.begin), off_t(o.end - o.begin), POSIX_FADV_WILLNEED);
    }
  }
  return files;
}

size_t DiskStore::load(std::span<const DiskBlock> expected, std::span<uint8_t* const> dst,
                       uint8_t* state_dst, bool* state_read) {
  const uint64_t bb = options_.layout.block_bytes;
  if (state_read) *state_read = false;
  const bool want_state = state_dst && state_read && options_.layout.state_bytes > 0;
  size_t n = 0;
  std::map<uint32_t, OpenFile> open = open_for_load(expected, dst.size());
  std::set<std::string> touched;
  while (n < expected.size() && n < dst.size()) {
    Location loc;
    std::string name;
    uint64_t off = 0, checksum = 0, state_off = 0, state_checksum = 0;
    bool read_state = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = index_.find(expected[n].hash);
      if (it == index_.end()) break;
      loc = it->second;
      File& f = files_.at(loc.file);
      const DiskBlock& b = f.header.blocks[loc.slot];
      // Same hash, other prefix (a collision): never serve it.
      if (b.parent != expected[n].parent || b.tokens != expected[n].tokens) break;
      name = f.name;
      off = f.header.data_offset(loc.slot);
      checksum = b.data_checksum;
      read_state = want_state && n + 1 == expected.size() && b.has_state;
      state_off = f.header.state_offset(loc.slot);
      state_checksum = b.state_checksum;
      lru_.erase(f.lru_pos);
      f.lru_pos = lru_.insert(lru_.end(), loc.file);
    }
    // Opened up front, unless the file was written since.
    auto [it, fresh] = open.try_emplace(loc.file);
    if (fresh) it->second.fd = dir_.open_read(name);
    const int fd = it->second.fd;
    std::optional<DiskError> bad;
    if (fd < 0) {
      bad = DiskError::Io;
    } else if (!read_at(fd, dst[n], bb, off)) {
      bad = DiskError::Truncated;
    } else if (block_checksum({dst[n], bb}) != checksum) {
      bad = DiskError::Checksum;
    } else if (read_state) {
      const uint64_t sb = options_.layout.state_bytes;
      if (!read_at(fd, state_dst, sb, state_off)) {
        bad = DiskError::Truncated;
      } else if (block_checksum({state_dst, sb}) != state_checksum) {
        bad = DiskError::Checksum;
      } else {
        *state_read = true;
      }
    }
    if (bad) {
      const std::string why = *bad == DiskError::Io
                                  ? "it can no longer be opened as a plain file"
                                  : "block " + std::to_string(loc.slot) + " cannot be used";
      count_error(*bad, name + ": " + why);
      std::vector<std::string> gone;
      {
        std::lock_guard<std::mutex> lock(mu_);
        gone = drop_file(loc.file);
      }
      remove_files(gone);
      break;
    }
    touched.insert(name);
    ++n;
  }
  // The files' times carry the LRU order across restarts.
  for (const auto& t : touched) dir_.touch(t);
  std::lock_guard<std::mutex> lock(mu_);
  stats_.loaded_blocks += n;
  return n;
}

}  // namespace baton::kv
