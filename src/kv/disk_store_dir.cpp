#include "kv/disk_store_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <stdexcept>

namespace baton::kv {
namespace {

// Names nobody can guess ahead of time; creation is exclusive anyway, so a guess only costs a
// retry.
std::string random_hex() {
  std::random_device rd;
  const uint64_t v = (uint64_t{rd()} << 32) | rd();
  return fmt::format("{:016x}", v);
}

int64_t stat_mtime_ns(const struct stat& st) {
  return int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
}

std::string without_trailing_slashes(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

// Creates the directory (0700: the tier's files are nobody else's business) and any missing
// parents (as the umask says). Errors surface when the directory is opened.
void create_directory(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  ::mkdir(path.c_str(), 0700);
}

// The directory must be the server's own: another user able to write in it could plant links
// or files under the tier's names.
void check_owner_and_mode(const std::string& path, int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    throw std::runtime_error(
        fmt::format("--kv-disk-dir {}: cannot inspect the directory ({}): choose another directory",
                    path, std::strerror(errno)));
  }
  const uid_t me = ::geteuid();
  if (st.st_uid != me) {
    throw std::runtime_error(fmt::format(
        "--kv-disk-dir {}: the directory belongs to uid {}, not to this server's uid {}; its "
        "owner could plant files in it: run `chown {} {}` or choose a directory of your own",
        path, st.st_uid, me, me, path));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    throw std::runtime_error(fmt::format(
        "--kv-disk-dir {}: the directory is writable by group or others (mode {:04o}), who "
        "could plant files or links in it: run `chmod 700 {}` or choose another directory",
        path, st.st_mode & 07777, path));
  }
}

}  // namespace

DiskDir::DiskDir(const std::string& path) : path_(path) {
  const std::string p = without_trailing_slashes(path);
  create_directory(p);
  fd_.reset(::open(p.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd_.fd < 0) {
    const int err = errno;
    throw std::runtime_error(fmt::format(
        "--kv-disk-dir {}: cannot create the directory ({}): choose a writable directory", path,
        err == ENOTDIR ? "a file of that name, or of a folder above it, exists"
                       : std::strerror(err)));
  }
  check_owner_and_mode(path, fd_.fd);
  open_lock_file();
}

void DiskDir::open_lock_file() {
  for (int attempt = 0; attempt < 2 && lock_fd_.fd < 0; ++attempt) {
    // O_NONBLOCK: a FIFO planted under the name must not stall the open.
    lock_fd_.reset(::openat(fd_.fd, kDiskLockName,
                            O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
    struct stat st {};
    if (lock_fd_.fd >= 0 && (::fstat(lock_fd_.fd, &st) != 0 || !S_ISREG(st.st_mode))) {
      lock_fd_.reset();
      errno = EINVAL;
    }
    if (lock_fd_.fd < 0 && (errno == ELOOP || errno == EINVAL)) remove(kDiskLockName);
  }
  if (lock_fd_.fd < 0) {
    throw std::runtime_error(
        fmt::format("--kv-disk-dir {}: cannot create its lock file {} ({}): remove what is under "
                    "that name or choose another directory",
                    path_, kDiskLockName, std::strerror(errno)));
  }
}

std::vector<DiskDir::Entry> DiskDir::list() const {
  std::vector<Entry> out;
  // A descriptor of its own: readdir moves its offset.
  DIR* d = ::fdopendir(::openat(fd_.fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (d == nullptr) return out;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    if (::fstatat(fd_.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone
    Entry en;
    en.name = name;
    en.regular = S_ISREG(st.st_mode);
    en.directory = S_ISDIR(st.st_mode);
    en.bytes = en.regular ? static_cast<uint64_t>(st.st_size) : 0;
    en.mtime_ns = stat_mtime_ns(st);
    out.push_back(std::move(en));
  }
  ::closedir(d);
  return out;
}

int DiskDir::create_unique(const std::string& prefix, const std::string& suffix,
                           std::string& name) const {
  for (int attempt = 0; attempt < 16; ++attempt) {
    name = prefix + random_hex() + suffix;
    const int fd =
        ::openat(fd_.fd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;  // errno is EEXIST
}

int DiskDir::open_read(const std::string& name, bool direct) const {
  // O_NONBLOCK: a FIFO under a segment's name must not stall the open; plain files ignore it.
  const int fd = ::openat(fd_.fd, name.c_str(),
                          O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (direct ? O_DIRECT : 0));
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    errno = EINVAL;
    return -1;
  }
  return fd;
}

bool DiskDir::remove(const std::string& name) const {
  return ::unlinkat(fd_.fd, name.c_str(), 0) == 0;
}

bool DiskDir::rename(const std::string& from, const std::string& to) const {
  // Replaces `to` itself when it exists, a link included: never its target.
  return ::renameat(fd_.fd, from.c_str(), fd_.fd, to.c_str()) == 0;
}

void DiskDir::sync() const {
  ::fsync(fd_.fd);
}

void DiskDir::touch(const std::string& name) const {
  ::utimensat(fd_.fd, name.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
}

int64_t DiskDir::free_bytes() const {
  struct statvfs sv {};
  if (::fstatvfs(fd_.fd, &sv) != 0) return -1;
  return static_cast<int64_t>(sv.f_bavail * sv.f_frsize);
}

int64_t DiskDir::mtime_ns() const {
  struct stat st {};
  if (::fstat(fd_.fd, &st) != 0) return -1;
  return stat_mtime_ns(st);
}

std::string DiskDir::publish(const std::string& tmp, const std::string& name) const {
  // A hard link fails when the name exists, atomically, on every filesystem that has links
  // (NFS included, where renameat2's RENAME_NOREPLACE is refused).
  std::string target = name;
  for (int attempt = 0; attempt < 16; ++attempt) {
    if (::linkat(fd_.fd, tmp.c_str(), fd_.fd, target.c_str(), 0) == 0) {
      remove(tmp);
      return target;
    }
    if (errno != EEXIST) return "";
    const size_t dot = name.rfind('.');
    target = name.substr(0, dot) + "-" + random_hex() + name.substr(dot);
  }
  return "";
}

DiskDir::Lock::Lock(const DiskDir& dir) : fd_(dir.lock_fd_.fd) {
  claim(fd_);
}

DiskDir::Lock::~Lock() {
  ::flock(fd_, LOCK_UN);
}

void DiskDir::claim(int fd) {
  while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
  }
}

bool DiskDir::abandoned(const std::string& name) const {
  util::Fd fd(::openat(fd_.fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  // A link or special file under a temporary name is no writer's: removed like a leftover.
  if (fd.fd < 0) return errno != ENOENT;
  return ::flock(fd.fd, LOCK_EX | LOCK_NB) == 0;
}

}  // namespace baton::kv
