#include "kv/disk_store.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "util/log.h"
#include "util/posix_file.h"

namespace baton::kv {

using util::Fd;
using util::read_at;
using util::write_all;
namespace fs = std::filesystem;

namespace {

constexpr const char* kSuffix = ".kvseg";
constexpr const char* kTmpSuffix = ".tmp";

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Reads and parses a segment's header from an open file.
SegmentHeader read_header(int fd) {
  std::vector<uint8_t> pre(kDiskPreambleBytes);
  if (!read_at(fd, pre.data(), pre.size(), 0)) {
    throw DiskFormatError(DiskError::Truncated, "file is shorter than a segment preamble");
  }
  std::vector<uint8_t> all(parse_preamble(pre));
  if (!read_at(fd, all.data(), all.size(), 0)) {
    throw DiskFormatError(DiskError::Truncated, "segment header is truncated");
  }
  return parse_header(all);
}

}  // namespace

std::string segment_file_name(uint64_t fingerprint, uint64_t first_hash) {
  return fmt::format("kv-{:016x}-{:016x}{}", fingerprint, first_hash, kSuffix);
}

DiskStore::DiskStore(DiskStoreOptions options) : options_(std::move(options)) {
  stats_.budget = options_.budget_bytes;
  check_directory();
  scan();
}

std::string DiskStore::path_of(const std::string& name) const {
  return (fs::path(options_.dir) / name).string();
}

void DiskStore::check_directory() const {
  const std::string& dir = options_.dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir)) {
    throw std::runtime_error(fmt::format(
        "--kv-disk-dir {}: cannot create the directory ({}): choose a writable directory", dir,
        ec ? ec.message() : "a file of that name exists"));
  }
  const std::string probe = path_of(".baton-write-probe");
  Fd fd(::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.fd < 0) {
    throw std::runtime_error(
        fmt::format("--kv-disk-dir {}: the directory is not writable ({}): fix its permissions "
                    "or choose another directory",
                    dir, std::strerror(errno)));
  }
  ::unlink(probe.c_str());
  struct statvfs sv {};
  if (::statvfs(dir.c_str(), &sv) != 0) return;
  uint64_t ours = 0;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec) && ends_with(e.path().filename().string(), kSuffix)) {
      ours += e.file_size(ec);
    }
  }
  const uint64_t room = static_cast<uint64_t>(sv.f_bavail) * sv.f_frsize + ours;
  if (room < options_.budget_bytes) {
    throw std::runtime_error(fmt::format(
        "--kv-disk-dir {}: the filesystem has {} MB free (with the tier's own files) but "
        "--kv-disk-space-mb is {}: lower --kv-disk-space-mb or free space",
        dir, room >> 20, options_.budget_bytes >> 20));
  }
}

void DiskStore::scan() {
  std::vector<std::pair<int64_t, uint32_t>> order;  // (mtime, file id) for the LRU
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(options_.dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file(ec)) continue;
    if (ends_with(name, std::string(kSuffix) + kTmpSuffix)) {
      ::unlink(e.path().c_str());  // a write that a crash interrupted
      continue;
    }
    if (!ends_with(name, kSuffix)) continue;
    struct stat st {};
    if (::stat(e.path().c_str(), &st) != 0) continue;
    const int64_t mtime = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    index_file(name, static_cast<uint64_t>(st.st_size), mtime, order);
  }
  std::sort(order.begin(), order.end());
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [mtime, id] : order) {
    auto& f = files_.at(id);
    lru_.erase(f.lru_pos);
    f.lru_pos = lru_.insert(lru_.end(), id);
  }
  log::info(
      "kv disk tier: {} ({} MB of {} MB): {} segments with {} blocks of this model, {} of "
      "others",
      options_.dir, stats_.bytes >> 20, options_.budget_bytes >> 20, stats_.files, stats_.blocks,
      stats_.foreign_files);
}

void DiskStore::index_file(const std::string& name, uint64_t size, int64_t mtime_ns,
                           std::vector<std::pair<int64_t, uint32_t>>& order) {
  File f;
  f.name = name;
  f.bytes = size;
  try {
    Fd fd(::open(path_of(name).c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.fd < 0) throw DiskFormatError(DiskError::Io, std::strerror(errno));
    SegmentHeader h = read_header(fd.fd);
    if (h.layout.fingerprint == options_.layout.fingerprint) {
      if (!(h.layout == options_.layout)) {
        throw DiskFormatError(DiskError::Layout, "the KV layout differs from this model's");
      }
      if (h.file_bytes() != size) {
        throw DiskFormatError(
            DiskError::Truncated,
            fmt::format("{} bytes where the header promises {}", size, h.file_bytes()));
      }
      f.ours = true;
      f.header = std::move(h);
    }
  } catch (const DiskFormatError& e) {
    count_error(e.kind, name + ": " + e.what());
    ::unlink(path_of(name).c_str());
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  order.emplace_back(mtime_ns, add_file(std::move(f)));
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
  for (const auto& n : names) ::unlink(path_of(n).c_str());
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
