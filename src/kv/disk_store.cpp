#include "kv/disk_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>

#include "util/log.h"
#include "util/posix_file.h"

namespace baton::kv {

using util::Fd;
using util::read_at;

namespace {

constexpr const char* kSuffix = ".kvseg";
constexpr const char* kTmpSuffix = ".tmp";
constexpr const char* kProbePrefix = ".baton-write-probe";

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A write's temporary file or the write probe, left behind by a crash.
bool is_leftover(const std::string& name) {
  return (starts_with(name, "kv-") && ends_with(name, kTmpSuffix)) ||
         starts_with(name, kProbePrefix);
}

// Reads and parses a segment's header from an open file of `size` bytes. The header's claimed
// length is checked against the file before a buffer is sized by it.
SegmentHeader read_header(int fd, uint64_t size) {
  std::vector<uint8_t> pre(kDiskPreambleBytes);
  if (size < pre.size() || !read_at(fd, pre.data(), pre.size(), 0)) {
    throw DiskFormatError(DiskError::Truncated, "file is shorter than a segment preamble");
  }
  const uint32_t header_bytes = parse_preamble(pre);
  if (header_bytes > size) {
    throw DiskFormatError(
        DiskError::Truncated,
        fmt::format("a {}-byte file whose header claims {} bytes", size, header_bytes));
  }
  std::vector<uint8_t> all(header_bytes);
  if (!read_at(fd, all.data(), all.size(), 0)) {
    throw DiskFormatError(DiskError::Truncated, "segment header is truncated");
  }
  return parse_header(all);
}

}  // namespace

std::string segment_file_name(uint64_t fingerprint, uint64_t first_hash) {
  return fmt::format("kv-{:016x}-{:016x}{}", fingerprint, first_hash, kSuffix);
}

DiskStore::DiskStore(DiskStoreOptions options) : options_(std::move(options)), dir_(options_.dir) {
  stats_.budget = options_.budget_bytes;
  const DiskLayout& l = options_.layout;
  if (l.block_size == 0 || l.block_size > kMaxDiskBlockSize || l.block_bytes == 0 ||
      l.block_bytes > kMaxDiskBlockBytes || l.layout.size() > kMaxDiskLayoutBytes ||
      l.state_bytes > kMaxDiskStateBytes) {
    throw std::runtime_error(fmt::format(
        "--kv-disk-dir: KV blocks of {} tokens and {} bytes do not fit the segment format "
        "(at most {} tokens): run without --kv-disk-dir",
        l.block_size, l.block_bytes, kMaxDiskBlockSize));
  }
  check_directory();
  scan();
}

void DiskStore::check_directory() const {
  const std::string& dir = options_.dir;
  std::string probe;
  Fd fd(dir_.create_unique(std::string(kProbePrefix) + "-", "", probe));
  if (fd.fd < 0) {
    throw std::runtime_error(
        fmt::format("--kv-disk-dir {}: the directory is not writable ({}): fix its permissions "
                    "or choose another directory",
                    dir, std::strerror(errno)));
  }
  dir_.remove(probe);
  const int64_t free = dir_.free_bytes();
  if (free < 0) return;
  uint64_t ours = 0;
  for (const auto& e : dir_.list()) {
    if (e.regular && ends_with(e.name, kSuffix)) ours += e.bytes;
  }
  const uint64_t room = static_cast<uint64_t>(free) + ours;
  if (room < options_.budget_bytes) {
    throw std::runtime_error(fmt::format(
        "--kv-disk-dir {}: the filesystem has {} MB free (with the tier's own files) but "
        "--kv-disk-space-mb is {}: lower --kv-disk-space-mb or free space",
        dir, room >> 20, options_.budget_bytes >> 20));
  }
}

void DiskStore::scan() {
  {
    DiskDir::Lock lock(dir_);
    refresh(true);
  }
  log::info(
      "kv disk tier: {} ({} MB of {} MB): {} segments with {} blocks of this model, {} of "
      "others",
      options_.dir, stats_.bytes >> 20, options_.budget_bytes >> 20, stats_.files, stats_.blocks,
      stats_.foreign_files);
}

void DiskStore::refresh_if_changed() {
  constexpr auto kFullListing = std::chrono::seconds(5);
  if (dir_.mtime_ns() == listed_dir_mtime_ &&
      std::chrono::steady_clock::now() - listed_at_ < kFullListing) {
    return;
  }
  refresh(false);
}

void DiskStore::refresh(bool leftovers) {
  listed_dir_mtime_ = dir_.mtime_ns();  // before listing: a change during it is seen next time
  listed_at_ = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.listings;
  }
  std::unordered_map<std::string, int64_t> listed;  // segment name -> mtime
  for (const auto& e : dir_.list()) {
    if (e.directory) continue;
    if (leftovers && is_leftover(e.name)) {
      // A crash interrupted a write; a link is removed, not followed. A live writer's file is
      // claimed by it and stays.
      if (dir_.abandoned(e.name)) dir_.remove(e.name);
      continue;
    }
    if (ends_with(e.name, kSuffix)) listed.emplace(e.name, e.mtime_ns);
  }
  std::vector<std::string> fresh;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<uint32_t> gone;
    std::unordered_set<std::string> known;
    for (const auto& [id, f] : files_) {
      if (listed.count(f.name)) {
        known.insert(f.name);
      } else {
        gone.push_back(id);  // another process removed it (its budget): not an error
      }
    }
    for (uint32_t id : gone) drop_file(id);
    for (const auto& [name, mtime] : listed) {
      if (!known.count(name)) fresh.push_back(name);
    }
  }
  for (const auto& name : fresh) index_file(name);
  // Every process's loads touch the files they read, so their times are the shared LRU order.
  std::vector<std::pair<int64_t, uint32_t>> order;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, f] : files_) {
    auto it = listed.find(f.name);
    order.emplace_back(it == listed.end() ? INT64_MAX : it->second, id);
  }
  std::sort(order.begin(), order.end());
  lru_.clear();
  for (const auto& [mtime, id] : order) files_.at(id).lru_pos = lru_.insert(lru_.end(), id);
}

void DiskStore::index_file(const std::string& name) {
  File f;
  f.name = name;
  try {
    Fd fd(dir_.open_read(name));
    struct stat st {};
    if (fd.fd < 0 && errno == ENOENT) return;  // removed since it was listed
    if (fd.fd < 0 || ::fstat(fd.fd, &st) != 0) {
      throw DiskFormatError(DiskError::Io, errno == ELOOP || errno == EINVAL
                                               ? "not a plain file (a link or special file)"
                                               : std::strerror(errno));
    }
    f.bytes = static_cast<uint64_t>(st.st_size);
    SegmentHeader h = read_header(fd.fd, f.bytes);
    // Every file, another model's too: its size is what its header promises (the limits on the
    // header keep this product far from overflowing).
    if (h.file_bytes() != f.bytes) {
      throw DiskFormatError(
          DiskError::Truncated,
          fmt::format("{} bytes where the header promises {}", f.bytes, h.file_bytes()));
    }
    if (h.layout.fingerprint == options_.layout.fingerprint) {
      if (!(h.layout == options_.layout)) {
        throw DiskFormatError(DiskError::Layout, "the KV layout differs from this model's");
      }
      f.ours = true;
      f.header = std::move(h);
    }
  } catch (const DiskFormatError& e) {
    count_error(e.kind, name + ": " + e.what());
    dir_.remove(name);
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  add_file(std::move(f));
}

uint32_t DiskStore::add_file(File f) {
  const uint32_t id = next_file_++;
  stats_.bytes += f.bytes;
  if (f.ours) {
    ++stats_.files;
    for (uint32_t s = 0; s < f.header.blocks.size(); ++s) {
      const DiskBlock& b = f.header.blocks[s];
      if (!index_.count(b.hash)) children_.emplace(b.parent, b.hash);
      index_[b.hash] = {id, s};  // a later copy of a block wins
    }
  } else {
    ++stats_.foreign_files;
  }
  f.lru_pos = lru_.insert(lru_.end(), id);
  files_.emplace(id, std::move(f));
  stats_.blocks = index_.size();
  return id;
}

std::vector<std::string> DiskStore::drop_file(uint32_t id) {
  auto it = files_.find(id);
  if (it == files_.end()) return {};
  File& f = it->second;
  stats_.bytes -= f.bytes;
  if (f.ours) {
    --stats_.files;
    for (const auto& b : f.header.blocks) {
      auto at = index_.find(b.hash);
      if (at == index_.end() || at->second.file != id) continue;
      index_.erase(at);
      auto [lo, hi] = children_.equal_range(b.parent);
      for (auto c = lo; c != hi; ++c) {
        if (c->second == b.hash) {
          children_.erase(c);
          break;
        }
      }
    }
  } else {
    --stats_.foreign_files;
  }
  lru_.erase(f.lru_pos);
  std::vector<std::string> gone{f.name};
  files_.erase(it);
  stats_.blocks = index_.size();
  return gone;
}

std::vector<std::string> DiskStore::make_room(uint64_t bytes) {
  std::vector<std::string> victims;
  while (stats_.bytes + bytes > options_.budget_bytes && !lru_.empty()) {
    for (auto& n : drop_file(lru_.front())) victims.push_back(std::move(n));
    ++stats_.evicted_files;
  }
  return victims;
}

void DiskStore::remove_files(const std::vector<std::string>& names) const {
  for (const auto& n : names) dir_.remove(n);
}

void DiskStore::count_error(DiskError kind, const std::string& detail) {
  bool first;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++stats_.errors[disk_error_name(kind)];
    first = logged_kinds_.insert(static_cast<int>(kind)).second;
  }
  if (first) {
    log::warn(
        "kv disk tier: skipped a segment ({}): {} (further {} errors are only counted in "
        "baton_kv_disk_errors_total)",
        disk_error_name(kind), detail, disk_error_name(kind));
  }
}

bool DiskStore::contains(uint64_t hash) const {
  std::lock_guard<std::mutex> lock(mu_);
  return index_.count(hash) != 0;
}

size_t DiskStore::leading_on_disk(std::span<const uint64_t> hashes) const {
  std::lock_guard<std::mutex> lock(mu_);
  size_t n = 0;
  while (n < hashes.size() && index_.count(hashes[n])) ++n;
  return n;
}

bool DiskStore::has_state(uint64_t hash) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = index_.find(hash);
  if (it == index_.end()) return false;
  return files_.at(it->second.file).header.blocks[it->second.slot].has_state;
}

std::optional<DiskStore::Tail> DiskStore::best_tail(uint64_t parent, std::span<const int32_t> next,
                                                    int32_t limit) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::optional<Tail> best;
  auto [lo, hi] = children_.equal_range(parent);
  for (auto c = lo; c != hi; ++c) {
    const Location& loc = index_.at(c->second);
    const DiskBlock& b = files_.at(loc.file).header.blocks[loc.slot];
    const size_t n = std::min({b.tokens.size(), next.size(), static_cast<size_t>(limit)});
    const auto len = static_cast<int32_t>(
        std::mismatch(b.tokens.begin(), b.tokens.begin() + static_cast<ptrdiff_t>(n), next.begin())
            .first -
        b.tokens.begin());
    // Ties go to the lower hash, so the choice does not depend on hash-map order.
    if (len > 0 &&
        (!best || len > best->matched || (len == best->matched && b.hash < best->block.hash))) {
      best = Tail{b, len};
    }
  }
  return best;
}

DiskStoreStats DiskStore::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

}  // namespace baton::kv
