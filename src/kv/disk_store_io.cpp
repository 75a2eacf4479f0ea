// DiskStore::save and DiskStore::load: the I/O itself, outside the index lock.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "kv/disk_store.h"
#include "util/posix_file.h"

namespace baton::kv {

// The page size mincore counts in (every x86-64 and arm64 Linux page cache's base page).
const uint64_t kPageBytes = uint64_t(::sysconf(_SC_PAGESIZE));

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

  // A fresh name, created exclusively: whatever already exists in the directory (a link
  // included) is never opened, truncated or written through. It is claimed under the directory
  // lock, so no other process takes it for a crash's leftover.
  std::string tmp;
  Fd fd;
  {
    DiskDir::Lock dir_lock(dir_);
    fd.reset(dir_.create_unique(name + ".", ".tmp", tmp));
    if (fd.fd >= 0) DiskDir::claim(fd.fd);
  }
  const bool created = fd.fd >= 0;
  bool ok = created && write_all(fd.fd, head.data(), head.size());
  for (size_t i = 0; ok && i < data.size(); ++i) ok = write_all(fd.fd, data[i], bb);
  for (size_t i = 0; ok && i < states.size(); ++i) {
    if (!states[i].empty()) ok = write_all(fd.fd, states[i].data(), sb);
  }
  ok = ok && ::fsync(fd.fd) == 0;
  std::string published;
  if (ok) {
    // Room is made from what the directory holds now, every process's segments included, and
    // the segment published before the lock is released: the budget holds across processes.
    DiskDir::Lock dir_lock(dir_);
    refresh(false);
    std::vector<std::string> victims;
    {
      std::lock_guard<std::mutex> lock(mu_);
      victims = make_room(total);
    }
    remove_files(victims);
    published = dir_.publish(tmp, name);
    if (!published.empty()) dir_.sync();  // durable only once the directory entry is on disk
    // Under the lock the directory changed only by this save, whose file is indexed below: the
    // next look need not list it again for that.
    listed_dir_mtime_ = dir_.mtime_ns();
  }
  if (published.empty()) {
    const int err = errno;
    if (created) dir_.remove(tmp);
    count_error(DiskError::Io, "writing " + name + ": " + std::strerror(err));
    return false;
  }
  File f;
  f.name = published;
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
  if (direct_fd >= 0) ::close(direct_fd);
}

namespace {

constexpr uint64_t kDirectAlign = 4096;  // O_DIRECT's alignment on every common device

// O_DIRECT wants aligned offsets, lengths and memory, which a block's place in its file and in
// the pool need not be: the aligned range around it is read into this buffer, then copied out.
class BounceBuffer {
 public:
  explicit BounceBuffer(uint64_t block_bytes)
      : bytes_((block_bytes + 2 * kDirectAlign - 1) / kDirectAlign * kDirectAlign),
        p_(static_cast<uint8_t*>(std::aligned_alloc(kDirectAlign, bytes_))) {}
  ~BounceBuffer() { std::free(p_); }
  BounceBuffer(const BounceBuffer&) = delete;
  BounceBuffer& operator=(const BounceBuffer&) = delete;

  // n bytes at `off` of fd (opened with O_DIRECT) into dst; false when the read fails or ends
  // early (errno EINVAL: the file refuses direct reads after all).
  bool read(int fd, uint8_t* dst, uint64_t n, uint64_t off) {
    const uint64_t start = off / kDirectAlign * kDirectAlign;
    const uint64_t len = (off + n - start + kDirectAlign - 1) / kDirectAlign * kDirectAlign;
    if (p_ == nullptr || len > bytes_) return false;
    uint64_t got = 0;
    while (got < len) {
      const ssize_t r = ::pread(fd, p_ + got, len - got, off_t(start + got));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += uint64_t(r);
      if (got % kDirectAlign != 0) break;  // the end of the file
    }
    if (got < off - start + n) return false;
    std::memcpy(dst, p_ + (off - start), n);
    return true;
  }

 private:
  uint64_t bytes_;
  uint8_t* p_;
};

}  // namespace

bool DiskStore::OpenFile::cached(uint64_t off, uint64_t n) const {
  if (resident.empty() || off < page_base || n == 0) return false;
  const uint64_t first = (off - page_base) / kPageBytes;
  const uint64_t last = (off + n - 1 - page_base) / kPageBytes;
  if (last >= resident.size()) return false;
  for (uint64_t p = first; p <= last; ++p) {
    if ((resident[p] & 1) == 0) return false;
  }
  return true;
}

namespace {

// Which pages of [begin, end) of fd are in the page cache, asked without reading any (a read
// that may not wait, RWF_NOWAIT, still starts readahead on a miss, which would race the direct
// reads for the device). Empty when the kernel cannot tell.
std::vector<unsigned char> resident_pages(int fd, uint64_t base, uint64_t end) {
  if (fd < 0 || end <= base) return {};
  const size_t len = end - base;
  void* map = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, off_t(base));
  if (map == MAP_FAILED) return {};
  std::vector<unsigned char> pages((len + kPageBytes - 1) / kPageBytes);
  if (::mincore(map, len, pages.data()) != 0) pages.clear();
  ::munmap(map, len);
  return pages;
}

}  // namespace

void DiskStore::open_buffered(OpenFile& o) const {
  o.fd = dir_.open_read(o.name);
  o.vanished = o.fd < 0 && errno == ENOENT;
}

// Blocks are read with O_DIRECT where the filesystem allows it: read through the page cache,
// a restore after a restart runs at the speed the kernel finds fresh page-cache memory (0.5-0.7
// GB/s measured on a VM, against 1.7-3.4 GB/s direct); but a block the page cache still holds
// is copied from there first (load). Where direct reads are refused, every
// file's range is advised up front, so the kernel reads them all at once instead of one
// readahead window per block read.
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
    open_buffered(o);
    o.page_base = o.begin / kPageBytes * kPageBytes;
    o.resident = resident_pages(o.fd, o.page_base, o.end);
    o.direct_fd = o.fd >= 0 ? dir_.open_read(o.name, true) : -1;
    if (o.fd >= 0 && o.direct_fd < 0) {
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
  BounceBuffer bounce(bb);
  std::set<std::string> touched;
  size_t from_cache = 0;
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
    OpenFile& file = it->second;
    if (fresh) {
      file.name = name;
      open_buffered(file);
    }
    if (file.vanished) {
      // Another process evicted it: a miss, not a fault. The load stops where it was.
      std::lock_guard<std::mutex> lock(mu_);
      drop_file(loc.file);
      break;
    }
    const int fd = file.fd;
    // A block still in the page cache (saved or read a moment ago) is copied from it: a direct
    // read would fetch it from the device again, at a fraction of memory's speed.
    const bool cached = fd >= 0 && file.cached(off, bb);
    if (!cached && file.direct_fd >= 0 && !bounce.read(file.direct_fd, dst[n], bb, off)) {
      ::close(file.direct_fd);  // refused after all, or failed: the buffered read decides
      file.direct_fd = -1;
    }
    std::optional<DiskError> bad;
    if (fd < 0) {
      bad = DiskError::Io;
    } else if ((cached || file.direct_fd < 0) && !read_at(fd, dst[n], bb, off)) {
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
    if (cached) ++from_cache;
  }
  // The files' times carry the LRU order across restarts.
  for (const auto& t : touched) dir_.touch(t);
  std::lock_guard<std::mutex> lock(mu_);
  stats_.loaded_blocks += n;
  stats_.cached_loads += from_cache;
  return n;
}

}  // namespace baton::kv
