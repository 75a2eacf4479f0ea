// The disk tier's directory: round trips, restarts, the budget, and every way a file can be bad.
#include "kv/disk_store.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "kv/disk_test_util.h"
#include "util/posix_file.h"

namespace baton::kv {
namespace {

namespace fs = std::filesystem;
using testing::chain;
using testing::load_chain;
using testing::options;
using testing::save_chain;
using testing::ScratchDir;

// The directory's entries but its lock file.
std::vector<fs::path> segments(const std::string& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename() != kDiskLockName) out.push_back(e.path());
  }
  return out;
}

TEST(DiskStore, SavedBlocksLoadBackExactlyAndSurviveARestart) {
  ScratchDir dir;
  const auto blocks = chain(testing::test_layout(), 5, 0);
  {
    DiskStore s(options(dir.path()));
    ASSERT_TRUE(save_chain(s, blocks));
    EXPECT_TRUE(s.contains(blocks[4].hash));
    EXPECT_EQ(load_chain(s, blocks), 5u);
    EXPECT_EQ(s.stats().files, 1u);
  }
  DiskStore again(options(dir.path()));
  std::vector<uint64_t> hashes;
  for (const auto& b : blocks) hashes.push_back(b.hash);
  EXPECT_EQ(again.leading_on_disk(hashes), 5u);
  EXPECT_EQ(load_chain(again, blocks), 5u);
  EXPECT_EQ(again.stats().blocks, 5u);
  EXPECT_EQ(again.stats().loaded_blocks, 5u);
}

// Blocks still in the page cache (just saved) are copied from it, not read from the device
// again; once evicted they come through the device read, the same bytes either way.
TEST(DiskStore, BlocksStillInThePageCacheAreCopiedFromIt) {
  ScratchDir dir;
  DiskStore s(options(dir.path()));
  const auto blocks = chain(testing::test_layout(), 5, 0);
  ASSERT_TRUE(save_chain(s, blocks));
  const auto files = segments(dir.path());
  ASSERT_EQ(files.size(), 1u);
  util::Fd probe(::open(files[0].c_str(), O_RDONLY | O_CLOEXEC));
  ASSERT_GE(probe.fd, 0);
  EXPECT_EQ(load_chain(s, blocks), 5u);
  EXPECT_EQ(s.stats().cached_loads, 5u);

  ASSERT_EQ(::fsync(probe.fd), 0);
  ASSERT_EQ(::posix_fadvise(probe.fd, 0, 0, POSIX_FADV_DONTNEED), 0);
  EXPECT_EQ(load_chain(s, blocks), 5u);
  EXPECT_EQ(s.stats().loaded_blocks, 10u);
  EXPECT_EQ(s.stats().cached_loads, 5u);
}

// A save lists the directory once (under its lock, for the shared budget); the periodic look
// after it lists again only when another process changed the directory.
TEST(DiskStore, ASaveIsNotListedTwice) {
  ScratchDir dir;
  DiskStore s(options(dir.path()));
  DiskStore other(options(dir.path()));
  const uint64_t at_start = s.stats().listings;
  ASSERT_TRUE(save_chain(s, chain(testing::test_layout(), 3, 0)));
  EXPECT_EQ(s.stats().listings, at_start + 1);
  s.refresh_if_changed();
  EXPECT_EQ(s.stats().listings, at_start + 1) << "its own save made it list again";
  ASSERT_TRUE(save_chain(other, chain(testing::test_layout(), 2, 900)));
  // A filesystem's clock may not tick between two saves this close: move the directory's time
  // on as a later tick would.
  struct stat st {};
  ASSERT_EQ(::stat(dir.path().c_str(), &st), 0);
  timespec times[2] = {st.st_atim, st.st_mtim};
  times[1].tv_sec += 1;
  ASSERT_EQ(::utimensat(AT_FDCWD, dir.path().c_str(), times, 0), 0);
  s.refresh_if_changed();
  EXPECT_EQ(s.stats().listings, at_start + 2) << "another process's save went unseen";
  EXPECT_EQ(s.stats().files, 2u);
}

// Blocks with state checkpoints (a hybrid's recurrent state, a windowed model's window): the
// checkpoint of the last block asked for comes back, checked, only when every block did; one
// damaged on disk is never handed out and takes its file with it.
TEST(DiskStore, StateCheckpointsLoadWithTheRunTheyEnd) {
  ScratchDir dir;
  DiskLayout layout = testing::test_layout();
  layout.state_bytes = 300;
  const auto blocks = chain(layout, 4, 0);
  std::vector<std::vector<uint8_t>> data, states(3);
  std::vector<const uint8_t*> ptrs;
  for (const auto& b : blocks) data.push_back(testing::data_for(b.hash, layout.block_bytes));
  for (const auto& d : data) ptrs.push_back(d.data());
  states[1] = testing::data_for(blocks[1].hash ^ 1, 300);
  states[2] = testing::data_for(blocks[2].hash ^ 1, 300);
  std::string name;
  {
    DiskStore s(options(dir.path(), 1 << 20, layout));
    ASSERT_TRUE(s.save(blocks, ptrs, states));
    // A checkpoint of another size is not this layout's: nothing is written.
    auto wrong = states;
    wrong[1].resize(299);
    EXPECT_FALSE(
        s.save(chain(layout, 2, 500), std::span(ptrs).first(2), std::span(wrong).first(2)));
  }
  DiskStore s(options(dir.path(), 1 << 20, layout));
  EXPECT_FALSE(s.has_state(blocks[0].hash));
  EXPECT_TRUE(s.has_state(blocks[1].hash));
  EXPECT_TRUE(s.has_state(blocks[2].hash));
  EXPECT_FALSE(s.has_state(blocks[3].hash));
  auto read = [&](size_t n, bool& state_read) {
    std::vector<std::vector<uint8_t>> dst(n, std::vector<uint8_t>(layout.block_bytes));
    std::vector<uint8_t*> dp;
    for (auto& d : dst) dp.push_back(d.data());
    std::vector<uint8_t> state(300, 0);
    const size_t got = s.load({blocks.data(), n}, dp, state.data(), &state_read);
    if (state_read) {
      EXPECT_EQ(state, states[n - 1]);
    }
    return got;
  };
  bool state_read = false;
  EXPECT_EQ(read(3, state_read), 3u);
  EXPECT_TRUE(state_read);
  EXPECT_EQ(read(2, state_read), 2u);
  EXPECT_TRUE(state_read);
  EXPECT_EQ(read(1, state_read), 1u);
  EXPECT_FALSE(state_read) << "block 0 carries no checkpoint";
  // Damage block 2's checkpoint (the file's last bytes): it is refused and the file deleted.
  const auto files = segments(dir.path());
  ASSERT_EQ(files.size(), 1u);
  {
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-1, std::ios::end);
    const char c = static_cast<char>(f.get() ^ 0x5A);
    f.seekp(-1, std::ios::end);
    f.put(c);
  }
  EXPECT_EQ(read(3, state_read), 2u);
  EXPECT_FALSE(state_read);
  EXPECT_EQ(s.stats().errors.at("checksum"), 1u);
  EXPECT_TRUE(segments(dir.path()).empty());
}

TEST(DiskStore, ALoadStopsAtTheFirstMissingOrDifferentBlock) {
  ScratchDir dir;
  DiskStore s(options(dir.path()));
  auto blocks = chain(testing::test_layout(), 4, 0);
  ASSERT_TRUE(save_chain(s, {blocks.begin(), blocks.begin() + 2}));
  EXPECT_EQ(load_chain(s, blocks), 2u);
  // Same hash, other tokens (a collision, or a caller's mistake): never served.
  auto other = blocks;
  other[1].tokens[0] += 1;
  EXPECT_EQ(load_chain(s, other), 1u);
  other = blocks;
  other[1].parent ^= 1;
  EXPECT_EQ(load_chain(s, other), 1u);
}

size_t open_descriptors() {
  return static_cast<size_t>(std::distance(fs::directory_iterator("/proc/self/fd"), {}));
}

// A conversation written in several turns lies in several segment files: one load reads them all
// (every file opened and advised up front) and closes each again, also when one is gone.
TEST(DiskStore, ALoadAcrossSegmentFilesReadsThemAllAndClosesThem) {
  ScratchDir dir;
  DiskStore s(options(dir.path()));
  const auto blocks = chain(testing::test_layout(), 6, 0);
  for (size_t i = 0; i < blocks.size(); i += 2) {
    ASSERT_TRUE(save_chain(s, {blocks.begin() + i, blocks.begin() + i + 2}));
  }
  ASSERT_EQ(s.stats().files, 3u);
  const size_t before = open_descriptors();
  EXPECT_EQ(load_chain(s, blocks), 6u);
  EXPECT_EQ(open_descriptors(), before);
  // The middle file vanishes behind the index's back: the load stops where it was.
  DiskStore again(options(dir.path()));  // holds its directory open
  const size_t with_again = open_descriptors();
  const auto& layout = s.options().layout;
  ASSERT_TRUE(
      fs::remove(fs::path(dir.path()) / segment_file_name(layout.fingerprint, blocks[2].hash)));
  EXPECT_EQ(load_chain(again, blocks), 2u);
  EXPECT_EQ(open_descriptors(), with_again);
}

TEST(DiskStore, TheBudgetEvictsTheLeastRecentlyUsedFiles) {
  ScratchDir dir;
  const auto layout = testing::test_layout();
  // Room for about three 2-block segments.
  const auto one = chain(layout, 2, 0);
  DiskStore probe(options(dir.path() + "/probe"));
  ASSERT_TRUE(save_chain(probe, one));
  const uint64_t seg_bytes = probe.stats().bytes;
  DiskStore s(options(dir.path() + "/s", seg_bytes * 3 + seg_bytes / 2));
  std::vector<std::vector<DiskBlock>> convs;
  for (int i = 0; i < 3; ++i) convs.push_back(chain(layout, 2, 1000 * (i + 1)));
  for (const auto& c : convs) ASSERT_TRUE(save_chain(s, c));
  ASSERT_EQ(load_chain(s, convs[0]), 2u);  // the oldest is used again: now the newest
  ASSERT_TRUE(save_chain(s, chain(layout, 2, 9000)));
  EXPECT_LE(s.stats().bytes, s.stats().budget);
  EXPECT_EQ(s.stats().evicted_files, 1u);
  EXPECT_EQ(load_chain(s, convs[0]), 2u);
  EXPECT_EQ(load_chain(s, convs[1]), 0u) << "the least recently used file goes first";
  EXPECT_EQ(load_chain(s, convs[2]), 2u);
  // A segment larger than the whole budget is not written, and that is not an error.
  EXPECT_FALSE(save_chain(s, chain(layout, 20, 50000)));
  EXPECT_TRUE(s.stats().errors.empty());
}

TEST(DiskStore, GarbageTruncatedAndTornFilesAreSkippedCountedAndDeleted) {
  ScratchDir dir;
  const auto layout = testing::test_layout();
  const auto a = chain(layout, 3, 0), b = chain(layout, 3, 500), c = chain(layout, 3, 900);
  {
    DiskStore s(options(dir.path()));
    ASSERT_TRUE(save_chain(s, a));
    ASSERT_TRUE(save_chain(s, b));
    ASSERT_TRUE(save_chain(s, c));
  }
  const auto files = segments(dir.path());
  ASSERT_EQ(files.size(), 3u);
  auto file_of = [&](uint64_t hash) {
    return fs::path(dir.path()) / segment_file_name(layout.fingerprint, hash);
  };
  {  // a replaced by garbage
    std::ofstream(file_of(a[0].hash), std::ios::binary | std::ios::trunc) << std::string(200, 'g');
  }
  fs::resize_file(file_of(b[0].hash), fs::file_size(file_of(b[0].hash)) - 7);  // b truncated
  {  // c: one byte of block 1's data flipped (block 2 is the last block_bytes); only a load sees it
    std::fstream f(file_of(c[0].hash), std::ios::binary | std::ios::in | std::ios::out);
    f.seekg(-static_cast<std::streamoff>(layout.block_bytes) - 3, std::ios::end);
    char x;
    f.read(&x, 1);
    f.seekp(-static_cast<std::streamoff>(layout.block_bytes) - 3, std::ios::end);
    x ^= 1;
    f.write(&x, 1);
  }
  {  // the temp file of a write that a crash interrupted
    std::ofstream(fs::path(dir.path()) / "kv-1-2.kvseg.tmp") << "half";
  }
  DiskStore s(options(dir.path()));
  auto st = s.stats();
  EXPECT_EQ(st.files, 1u);
  EXPECT_EQ(st.errors["bad_magic"], 1u);
  EXPECT_EQ(st.errors["truncated"], 1u);
  EXPECT_EQ(load_chain(s, a), 0u);
  EXPECT_EQ(load_chain(s, b), 0u);
  // c's block 1 is the damaged one: block 0 loads, then the file is dropped.
  EXPECT_EQ(load_chain(s, c), 1u);
  st = s.stats();
  EXPECT_EQ(st.errors["checksum"], 1u);
  EXPECT_EQ(st.files, 0u);
  EXPECT_TRUE(segments(dir.path()).empty()) << "bad files and leftovers are deleted";
}

TEST(DiskStore, AnotherModelsFilesAreKeptCountedAndNeverServed) {
  ScratchDir dir;
  auto other = testing::test_layout();
  other.fingerprint = 0xBEEF;
  const auto theirs = chain(other, 3, 0, other.fingerprint);
  {
    DiskStore s(options(dir.path(), 1 << 20, other));
    ASSERT_TRUE(save_chain(s, theirs));
  }
  DiskStore s(options(dir.path()));
  EXPECT_EQ(s.stats().foreign_files, 1u);
  EXPECT_EQ(s.stats().files, 0u);
  EXPECT_GT(s.stats().bytes, 0u);
  EXPECT_FALSE(s.contains(theirs[0].hash));
  EXPECT_TRUE(s.stats().errors.empty());
  // Same fingerprint, other KV layout (impossible from baton, possible by hand): refused.
  auto changed = testing::test_layout();
  changed.block_bytes *= 2;
  ScratchDir dir2;
  {
    DiskStore w(options(dir2.path(), 1 << 20, changed));
    ASSERT_TRUE(save_chain(w, chain(changed, 1, 0)));
  }
  DiskStore r(options(dir2.path()));
  EXPECT_EQ(r.stats().errors["layout"], 1u);
}

TEST(DiskStore, UnusableDirectoriesAreRefusedWithTheFix) {
  ScratchDir dir;
  const std::string file = dir.path() + "/plain-file";
  std::ofstream(file) << "x";
  try {
    DiskStore s(options(file));
    FAIL() << "a regular file was accepted as the directory";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--kv-disk-dir"), std::string::npos) << e.what();
  }
  EXPECT_THROW(DiskStore(options(file + "/below")), std::runtime_error);
  if (::geteuid() != 0) {  // root writes through permissions
    const std::string ro = dir.path() + "/read-only";
    fs::create_directory(ro);
    ::chmod(ro.c_str(), 0555);
    EXPECT_THROW(DiskStore(options(ro)), std::runtime_error);
    ::chmod(ro.c_str(), 0755);
  }
  try {
    DiskStore s(options(dir.path(), uint64_t{1} << 62));  // more than any disk
    FAIL() << "a budget over the free space was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--kv-disk-space-mb"), std::string::npos) << e.what();
  }
}

TEST(DiskStore, BestTailMatchesTheLongestStoredPrefixAfterAParent) {
  ScratchDir dir;
  DiskStore s(options(dir.path()));
  const auto layout = testing::test_layout();
  const auto a = chain(layout, 2, 0);  // tokens 0..7, block size 4
  ASSERT_TRUE(save_chain(s, a));
  const std::vector<int32_t> next = {4, 5, 6, 99};
  auto t = s.best_tail(a[0].hash, next, 4);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->matched, 3);
  EXPECT_EQ(t->block.hash, a[1].hash);
  EXPECT_EQ(t->block.tokens, a[1].tokens);
  EXPECT_EQ(s.best_tail(a[0].hash, next, 2)->matched, 2) << "the limit holds";
  EXPECT_FALSE(s.best_tail(a[0].hash, std::vector<int32_t>{9, 9}, 2)) << "no token matches";
  EXPECT_FALSE(s.best_tail(12345, next, 4)) << "another parent";
  // The tail block loads like any other (its expected tokens are the stored ones).
  EXPECT_EQ(testing::load_chain(s, {t->block}), 1u);
}

}  // namespace
}  // namespace baton::kv
