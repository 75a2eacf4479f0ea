#include "pull/part_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "pull/pull.h"

namespace baton::pull {
namespace {

std::string errno_text() {
  return std::strerror(errno);
}

void fsync_dir(const std::filesystem::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // the rename is done; only its durability across a crash is unconfirmed
  ::fsync(fd);
  ::close(fd);
}

// Printable start of a refused file, so "<!DOCTYPE html>" shows what the server sent instead.
std::string printable(const std::string& s) {
  std::string out;
  for (char c : s.substr(0, 32)) {
    out += std::isprint(static_cast<unsigned char>(c)) ? c : '.';
  }
  return out;
}

}  // namespace

PartFile::PartFile(const std::filesystem::path& final_path) : path_(final_path) {
  path_ += ".part";
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw PullError(
        fmt::format("cannot open {} for writing ({}); set BATON_CACHE to a "
                    "writable folder",
                    path_.string(), errno_text()));
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd_);
    fd_ = -1;
    throw PullError(
        fmt::format("another baton pull is downloading {} now; wait for it to "
                    "finish (or stop it) and run this again",
                    final_path.string()));
  }
  std::vector<char> buf(1 << 20);
  for (;;) {
    ssize_t n = ::read(fd_, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw PullError(fmt::format("cannot read {} ({})", path_.string(), errno_text()));
    if (n == 0) break;
    hash_.update(buf.data(), static_cast<size_t>(n));
    size_ += static_cast<uint64_t>(n);
  }
}

PartFile::~PartFile() {
  if (fd_ >= 0) ::close(fd_);
}

void PartFile::append(const char* data, size_t n) {
  const size_t total = n;
  while (n > 0) {
    ssize_t w = ::write(fd_, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      throw PullError(
          fmt::format("cannot write {} ({}); free disk space or set BATON_CACHE to "
                      "another disk, then run again: it resumes",
                      path_.string(), errno_text()));
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  hash_.update(data - total, total);
  size_ += total;
}

void PartFile::truncate() {
  if (::ftruncate(fd_, 0) != 0 || ::lseek(fd_, 0, SEEK_SET) != 0) {
    throw PullError(fmt::format("cannot truncate {} ({})", path_.string(), errno_text()));
  }
  size_ = 0;
  hash_.reset();
}

std::string PartFile::first_bytes(size_t n) const {
  std::string out(n, '\0');
  ssize_t r = ::pread(fd_, out.data(), n, 0);
  out.resize(r > 0 ? static_cast<size_t>(r) : 0);
  return out;
}

std::string PartFile::sha256() {
  return hash_.hex_digest();
}

void PartFile::remove() {
  if (fd_ < 0) return;  // already removed or placed: the name may be another process's now
  ::unlink(path_.c_str());
  ::close(fd_);
  fd_ = -1;
}

void PartFile::place(const std::filesystem::path& final_path) {
  if (::fsync(fd_) != 0) {
    throw PullError(fmt::format("cannot flush {} to disk ({})", path_.string(), errno_text()));
  }
  if (::rename(path_.c_str(), final_path.c_str()) != 0) {
    throw PullError(fmt::format("cannot rename {} to {} ({})", path_.string(), final_path.string(),
                                errno_text()));
  }
  fsync_dir(final_path.parent_path());
  ::close(fd_);
  fd_ = -1;
}

std::string gguf_header_problem(const std::string& head) {
  if (head.size() < 4 || head.compare(0, 4, "GGUF") != 0) {
    return fmt::format(
        "it is not a GGUF file (it starts with \"{}\", not \"GGUF\"); check that "
        "the reference names a .gguf file",
        printable(head));
  }
  if (head.size() < 8) return "it is not a GGUF file (shorter than a GGUF header)";
  uint32_t version = 0;
  std::memcpy(&version, head.data() + 4, 4);  // little-endian, as the GGUF reader assumes
  if (version != 2 && version != 3) {
    return fmt::format(
        "it is GGUF version {}; baton reads versions 2 and 3 "
        "(little-endian): pick a current conversion of the model",
        version);
  }
  return "";
}

}  // namespace baton::pull
