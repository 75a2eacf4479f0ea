#pragma once
// The disk tier's directory, opened once and then used only through that descriptor: every name
// in it is created, opened, renamed, touched and removed relative to it, and never through a
// symbolic link. A link planted in the directory (as a segment, a temporary file or the write
// probe) is refused or removed, never written through; files are created exclusively, so nothing
// that already exists under a name is truncated.
//
// The directory itself must be the server's own: owned by its uid and not writable by group or
// others (who could otherwise plant files and links in it). A --kv-disk-dir that is itself a link
// is followed (the user named it), and the directory it leads to is checked the same way.
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "util/posix_file.h"

namespace baton::kv {

class DiskDir {
 public:
  // Creates `path` (mode 0700; missing parents as usual) when it does not exist, opens it and
  // checks it. Throws std::runtime_error naming the fix (chown, chmod 700, another directory).
  explicit DiskDir(const std::string& path);

  const std::string& path() const { return path_; }

  struct Entry {
    std::string name;
    bool regular = false;    // a plain file (not a link, directory, FIFO, ...)
    bool directory = false;  // never removed
    uint64_t bytes = 0;      // regular files
    int64_t mtime_ns = 0;    // the file's own time (a link's, not its target's)
  };
  // Every entry but "." and "..", as the directory holds them (links are not followed).
  std::vector<Entry> list() const;

  // Creates a new file named prefix + 16 random hex digits + suffix, exclusively and without
  // following links (mode 0600), retrying names that exist. The descriptor (or -1, errno set);
  // `name` receives the name used.
  int create_unique(const std::string& prefix, const std::string& suffix, std::string& name) const;
  // Opens a plain file for reading; -1 (errno set) for a link, a FIFO or anything not a plain file.
  // direct: O_DIRECT, reads that bypass the page cache (-1 where the filesystem refuses it).
  int open_read(const std::string& name, bool direct = false) const;
  // Removes the entry itself (a link, not its target). False when it could not.
  bool remove(const std::string& name) const;
  bool rename(const std::string& from, const std::string& to) const;
  // Makes a rename durable.
  void sync() const;
  // Sets a file's times to now (a link is not followed).
  void touch(const std::string& name) const;
  // Bytes free to this user on the directory's filesystem; -1 when unknown.
  int64_t free_bytes() const;
  // The directory's own modification time: it changes when any process adds, renames or
  // removes an entry, so a reader can tell cheaply whether to list it again.
  int64_t mtime_ns() const;

  // Publishes a finished temporary file under `name`, or under `name` with a random suffix
  // when another writer already took it, and never replaces anything: a segment that another
  // process has indexed (or is reading) stays what it was. The name used; empty on failure.
  std::string publish(const std::string& tmp, const std::string& name) const;

  // Several processes may share the directory (replicas behind a proxy). The directory lock
  // (an flock on a lock file in it) orders what must not interleave between them: creating a
  // temporary file and locking it, deciding what to evict and publishing a segment, and
  // removing temporary files that no writer holds.
  class Lock {
   public:
    explicit Lock(const DiskDir& dir);
    ~Lock();
    Lock(const Lock&) = delete;
    Lock& operator=(const Lock&) = delete;

   private:
    int fd_;
  };
  // Takes a writer's claim on its temporary file (held until the descriptor closes).
  static void claim(int fd);
  // A temporary file that no live writer claims (its writer crashed or was killed).
  bool abandoned(const std::string& name) const;

 private:
  void open_lock_file();

  std::string path_;
  util::Fd fd_;
  util::Fd lock_fd_;
};

// The lock file's name: never a segment or a temporary file, so no scan removes it.
inline constexpr const char* kDiskLockName = ".baton-kv.lock";

}  // namespace baton::kv
