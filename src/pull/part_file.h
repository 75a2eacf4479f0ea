#pragma once
// The "<final>.part" file a download grows in: locked against a second `baton pull` of the same
// file, hashed as it grows, and renamed to the final name only when complete and checked.
#include <cstdint>
#include <filesystem>
#include <string>

#include "pull/sha256.h"

namespace baton::pull {

class PartFile {
 public:
  // Opens (creating) final + ".part" and hashes the bytes already there. Throws PullError when
  // another process holds it or it cannot be opened.
  explicit PartFile(const std::filesystem::path& final_path);
  ~PartFile();
  PartFile(const PartFile&) = delete;
  PartFile& operator=(const PartFile&) = delete;

  uint64_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }
  void append(const char* data, size_t n);  // throws PullError (disk full, ...)
  void truncate();                          // back to zero bytes, hash reset
  std::string first_bytes(size_t n) const;  // up to n bytes from the start
  std::string sha256();                     // of the bytes so far; call once, at the end
  void remove();                            // deletes the file (the lock goes with it)
  // fsync, rename over the final name, fsync the folder: the final name only ever holds a
  // complete file.
  void place(const std::filesystem::path& final_path);

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  uint64_t size_ = 0;
  Sha256 hash_;
};

// "" when `head` (a file's first bytes) starts a GGUF file baton reads; otherwise why not.
std::string gguf_header_problem(const std::string& head);

}  // namespace baton::pull
