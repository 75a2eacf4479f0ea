#pragma once
// The directory of KV segment files behind the RAM block pool: an index from chain hash to
// (file, slot), a byte budget kept by evicting the least recently used files, and crash-safe
// writes. Loads and saves run on the disk tier's I/O thread; the engine loop only asks the index
// (contains / leading_on_disk), which never waits for I/O: the lock guards the index alone.
//
// Crash safety: a segment is written to NAME.<random>.tmp (created exclusively), fsynced, linked
// to NAME (never replacing a segment) and the directory fsynced; leftovers of a crash (kv-*.tmp
// that no live writer holds) are removed, and
// every file is checked (header sizes against the file's at start, before anything is allocated
// for it; each block's data checksum when it is loaded), so a torn, corrupted or hostile file is
// skipped, counted and deleted, never used. No link in the directory is ever followed
// (disk_store_dir.h).
//
// Several processes may share one directory (replicas behind a proxy, on one machine or over a
// network filesystem): published segments never change, every process re-lists the directory
// when it changed (refresh) and so indexes what the others wrote, eviction decides from the
// directory's real contents under the directory lock, and a file another process removed is
// dropped from the index without counting an error.
#include <chrono>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kv/disk_format.h"
#include "kv/disk_store_dir.h"

namespace baton::kv {

struct DiskStoreOptions {
  std::string dir;
  uint64_t budget_bytes = 0;
  DiskLayout layout;
};

struct DiskStoreStats {
  uint64_t bytes = 0;          // every segment file in the directory, other models' included
  uint64_t budget = 0;         // --kv-disk-space-mb
  uint64_t files = 0;          // this model's files
  uint64_t foreign_files = 0;  // other models' or layouts' files (kept, counted in the budget)
  uint64_t blocks = 0;         // blocks indexed for this model
  uint64_t saved_blocks = 0;   // written since start
  uint64_t loaded_blocks = 0;  // read back and verified since start
  uint64_t cached_loads = 0;   // of those, copied from the page cache (no device read)
  uint64_t evicted_files = 0;  // removed to stay within the budget
  // Directory listings since start: at start, one per save (under the directory's lock, for
  // the shared budget), one per change other processes made, and one every few seconds.
  uint64_t listings = 0;
  std::map<std::string, uint64_t> errors;  // by DiskError name
};

class DiskStore {
 public:
  // Creates the directory if needed and indexes the files in it (headers only). Throws
  // std::runtime_error naming the fix when the directory cannot be used (see DiskDir) or the
  // filesystem has less room than the budget.
  explicit DiskStore(DiskStoreOptions options);

  const DiskStoreOptions& options() const { return options_; }
  bool contains(uint64_t hash) const;
  // How many of `hashes`, from the first, are indexed.
  size_t leading_on_disk(std::span<const uint64_t> hashes) const;
  // The indexed block `hash` carries the state checkpoint taken at its end.
  bool has_state(uint64_t hash) const;

  // The stored block after `parent` whose leading tokens match most of `next` (at most `limit`
  // of them): a prompt's last, partial block can start from a longer sequence's full block, as
  // the RAM pool's copy-on-write tail does. nullopt when none matches a token.
  struct Tail {
    DiskBlock block;  // hash, parent and all its tokens, as a load expects them
    int32_t matched = 0;
  };
  std::optional<Tail> best_tail(uint64_t parent, std::span<const int32_t> next,
                                int32_t limit) const;

  // I/O thread. Writes one segment holding `blocks` (their checksums and state flags are set
  // here) with data[i] of layout.block_bytes each and, where states[i] is not empty, block i's
  // state checkpoint (layout.state_bytes); evicts old files to stay within the budget. False
  // (and counted) when it could not be written; nothing partial is ever indexed.
  bool save(std::vector<DiskBlock> blocks, std::span<const uint8_t* const> data,
            std::span<const std::vector<uint8_t>> states = {});
  // I/O thread. Reads the blocks named by expected[i].hash into dst[i], in order, and stops at
  // the first that is missing, does not match its expected parent and tokens, or fails its
  // checksum (that file is then deleted). Returns how many leading blocks are now in dst. With
  // `state_dst`, once every block is read, the last one's state checkpoint goes there too;
  // *state_read says whether it did (the block has one and it passed its checksum).
  size_t load(std::span<const DiskBlock> expected, std::span<uint8_t* const> dst,
              uint8_t* state_dst = nullptr, bool* state_read = nullptr);

  DiskStoreStats stats() const;

  // I/O thread. Brings the index up to the directory when it changed since the last look (or
  // every few seconds regardless, since a directory's time may not move between two changes
  // within one clock tick): indexes segments other processes published, forgets the ones they
  // removed, and takes the LRU order from the files' times, which every process's loads set.
  void refresh_if_changed();

 private:
  struct File {
    std::string name;
    uint64_t bytes = 0;
    bool ours = false;
    SegmentHeader header;  // ours only
    std::list<uint32_t>::iterator lru_pos;
  };
  struct Location {
    uint32_t file = 0;
    uint32_t slot = 0;
  };
  void check_directory() const;
  void scan();  // at start, under the directory lock
  // Lists the directory and brings the index up to it; `leftovers`: also removes abandoned
  // temporary files (under the directory lock, which the caller holds).
  void refresh(bool leftovers);
  // Reads a segment's header and indexes it; a file that vanished is skipped, a bad one
  // counted and deleted.
  void index_file(const std::string& name);
  uint32_t add_file(File f);                           // mu_ held
  std::vector<std::string> drop_file(uint32_t id);     // mu_ held; returns the name to unlink
  std::vector<std::string> make_room(uint64_t bytes);  // mu_ held; victims' names
  void remove_files(const std::vector<std::string>& names) const;
  void count_error(DiskError kind, const std::string& detail);  // logs each kind once
  // The files a load of `expected` reads, by file id, each opened (fd -1 where that failed, so
  // the load reports the file) and, where O_DIRECT is refused, its range advised to the kernel.
  struct OpenFile {
    std::string name;
    uint64_t begin = UINT64_MAX, end = 0;  // the byte range the load reads
    int fd = -1;                           // owned
    int direct_fd = -1;                    // owned: the same file with O_DIRECT, -1 where refused
    bool vanished = false;                 // removed by another process since it was indexed
    // Which pages of [page_base, end) the page cache held when the load began (mincore).
    uint64_t page_base = 0;
    std::vector<unsigned char> resident;
    // The page cache held every byte of [off, off + n) when the load began.
    bool cached(uint64_t off, uint64_t n) const;
    OpenFile() = default;
    OpenFile(const OpenFile&) = delete;
    OpenFile& operator=(const OpenFile&) = delete;
    ~OpenFile();
  };
  // Opens o.name for buffered reads, noting whether another process removed it.
  void open_buffered(OpenFile& o) const;
  std::map<uint32_t, OpenFile> open_for_load(std::span<const DiskBlock> expected,
                                             size_t limit) const;

  DiskStoreOptions options_;
  DiskDir dir_;
  mutable std::mutex mu_;
  std::unordered_map<uint32_t, File> files_;
  std::list<uint32_t> lru_;  // least recently used first
  std::unordered_map<uint64_t, Location> index_;
  std::unordered_multimap<uint64_t, uint64_t> children_;  // parent hash -> indexed block hash
  uint32_t next_file_ = 1;
  DiskStoreStats stats_;
  std::unordered_set<int> logged_kinds_;
  int64_t listed_dir_mtime_ = -1;  // the directory's time at the last full listing
  std::chrono::steady_clock::time_point listed_at_;  // when the last full listing was taken
};

// "kv-<fingerprint>-<first block hash>.kvseg": names are unique per segment and say whose it is.
std::string segment_file_name(uint64_t fingerprint, uint64_t first_hash);

}  // namespace baton::kv
