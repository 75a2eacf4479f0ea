// The disk tier against files someone else put in its directory: headers whose counts and sizes
// lie (with a correct checksum), links planted under every name the tier uses, special files,
// and directories that are not the server's own.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "kv/disk_store.h"
#include "kv/disk_test_util.h"
#include "support/read_file.h"

namespace baton::kv {
namespace {

namespace fs = std::filesystem;
using testing::chain;
using testing::load_chain;
using testing::options;
using testing::save_chain;
using testing::ScratchDir;

void write_all(const fs::path& p, const std::vector<uint8_t>& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

int64_t peak_rss_kb() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// A real segment's bytes with its block count set to `n` and the header checksum recomputed.
std::vector<uint8_t> claiming_blocks(const std::vector<uint8_t>& segment, uint32_t n) {
  std::vector<uint8_t> out = segment;
  uint32_t header_bytes;
  std::memcpy(&header_bytes, out.data() + 12, sizeof(header_bytes));
  std::memcpy(out.data() + 28, &n, sizeof(n));
  const uint64_t sum = block_checksum({out.data(), header_bytes - sizeof(uint64_t)});
  std::memcpy(out.data() + header_bytes - sizeof(sum), &sum, sizeof(sum));
  return out;
}

TEST(DiskHostile, HeadersClaimingHugeCountsAreSkippedWithoutAllocatingForThem) {
  ScratchDir dir;
  const auto layout = testing::test_layout();
  const auto good = chain(layout, 3, 0);
  const auto victim = chain(layout, 3, 500);
  {
    DiskStore s(options(dir.path()));
    ASSERT_TRUE(save_chain(s, good));
    ASSERT_TRUE(save_chain(s, victim));
  }
  const fs::path seg = fs::path(dir.path()) / segment_file_name(layout.fingerprint, victim[0].hash);
  const auto bytes = [&] {
    const std::string s = baton::testing::read_file(seg);
    return std::vector<uint8_t>(s.begin(), s.end());
  }();
  fs::remove(seg);
  // As another model's files too: those are kept when sound, so their headers are checked alike.
  write_all(fs::path(dir.path()) / "kv-a.kvseg", claiming_blocks(bytes, 0xFFFFFFFFu));
  write_all(fs::path(dir.path()) / "kv-b.kvseg", claiming_blocks(bytes, 50'000'000u));
  auto foreign = claiming_blocks(bytes, 50'000'000u);
  foreign[16] ^= 0xFF;  // another fingerprint
  write_all(fs::path(dir.path()) / "kv-c.kvseg", claiming_blocks(foreign, 50'000'000u));
  const int64_t before = peak_rss_kb();
  std::optional<DiskStore> s;
  ASSERT_NO_THROW(s.emplace(options(dir.path())));
  // 50M blocks parsed would take gigabytes; a bounded header costs a few megabytes at most.
  EXPECT_LT(peak_rss_kb() - before, 256 * 1024) << "KB of peak memory while opening";
  const auto st = s->stats();
  EXPECT_EQ(st.errors.at("truncated"), 3u);
  EXPECT_EQ(st.files, 1u);
  EXPECT_EQ(st.foreign_files, 0u);
  EXPECT_EQ(load_chain(*s, good), 3u);
  EXPECT_FALSE(fs::exists(fs::path(dir.path()) / "kv-a.kvseg")) << "bad files are deleted";
  EXPECT_FALSE(fs::exists(fs::path(dir.path()) / "kv-b.kvseg"));
}

TEST(DiskHostile, HeadersLongerThanTheirFileOrSizesThatDisagreeAreSkipped) {
  ScratchDir dir;
  const auto layout = testing::test_layout();
  const auto a = chain(layout, 2, 0);
  auto other = layout;
  other.fingerprint = 0xBEEF;
  const auto theirs = chain(other, 2, 0, other.fingerprint);
  {
    DiskStore s(options(dir.path()));
    ASSERT_TRUE(save_chain(s, a));
    DiskStore t(options(dir.path(), 1 << 20, other));
    ASSERT_TRUE(save_chain(t, theirs));
  }
  // A preamble claiming a 4 MB header in a 20-byte file.
  std::vector<uint8_t> pre = {'B', 'A', 'T', 'O', 'N', 'K',  'V', 'S', kDiskFormatVersion,
                              0,   0,   0,   0,   0,   0x40, 0};
  pre.resize(20);
  write_all(fs::path(dir.path()) / "kv-short.kvseg", pre);
  // Another model's file with bytes appended: its size no longer matches its header.
  std::ofstream(fs::path(dir.path()) / segment_file_name(other.fingerprint, theirs[0].hash),
                std::ios::app)
      << "extra";
  DiskStore s(options(dir.path()));
  EXPECT_EQ(s.stats().errors.at("truncated"), 2u);
  EXPECT_EQ(s.stats().foreign_files, 0u);
  EXPECT_EQ(load_chain(s, a), 2u);
}

// The names a writer could plant links under ahead of time: the old fixed probe and temporary
// names, the segment names a save will use, and leftovers a start removes.
std::vector<std::string> predictable_names(const DiskLayout& l,
                                           const std::vector<std::vector<DiskBlock>>& chains) {
  std::vector<std::string> out = {".baton-write-probe", ".baton-write-probe-0000000000000000"};
  for (const auto& c : chains) {
    const std::string seg = segment_file_name(l.fingerprint, c[0].hash);
    out.push_back(seg);
    out.push_back(seg + ".tmp");
    out.push_back(seg + ".0000000000000000.tmp");
  }
  return out;
}

TEST(DiskHostile, LinksPlantedInTheDirectoryAreNeverWrittenOrReadThrough) {
  ScratchDir dir, outside;
  const auto layout = testing::test_layout();
  const fs::path target = fs::path(outside.path()) / "precious";
  const std::string precious = "the contents of a file the server must never touch\n";
  std::ofstream(target) << precious;
  const std::string tier = dir.path() + "/tier";
  ASSERT_TRUE(fs::create_directory(tier));
  ASSERT_EQ(::chmod(tier.c_str(), 0700), 0);
  const std::vector<std::vector<DiskBlock>> before = {chain(layout, 2, 0), chain(layout, 2, 100)};
  const std::vector<std::vector<DiskBlock>> after = {chain(layout, 2, 200), chain(layout, 2, 300)};
  for (const auto& n : predictable_names(layout, before))
    fs::create_symlink(target, tier + "/" + n);
  // A link under a segment's name to a real, valid segment elsewhere: never read either.
  const auto elsewhere = chain(layout, 2, 400);
  {
    DiskStore e(options(outside.path() + "/real"));
    ASSERT_TRUE(save_chain(e, elsewhere));
  }
  fs::create_symlink(
      fs::path(outside.path()) / "real" / segment_file_name(layout.fingerprint, elsewhere[0].hash),
      tier + "/" + segment_file_name(layout.fingerprint, elsewhere[0].hash));

  DiskStore s(options(tier));
  EXPECT_EQ(s.stats().files, 0u);
  EXPECT_FALSE(s.contains(elsewhere[0].hash)) << "a linked segment is not indexed";
  EXPECT_EQ(s.stats().errors.at("io"), 3u) << "two planted segment links and one to elsewhere";
  for (const auto& c : before) ASSERT_TRUE(save_chain(s, c));
  // Links planted while the server runs, under the names its next saves use.
  for (const auto& n : predictable_names(layout, after)) {
    std::error_code ec;
    fs::create_symlink(target, tier + "/" + n, ec);
  }
  for (const auto& c : after) ASSERT_TRUE(save_chain(s, c));
  for (const auto& c : before) EXPECT_EQ(load_chain(s, c), 2u);
  for (const auto& c : after) EXPECT_EQ(load_chain(s, c), 2u);
  EXPECT_EQ(baton::testing::read_file(target), precious) << "a link's target was written";
  EXPECT_EQ(fs::file_size(target), precious.size());
  EXPECT_EQ(load_chain(s, elsewhere), 0u);
  // A restart removes the leftover links (the links, not their targets) and keeps the segments.
  DiskStore again(options(tier));
  EXPECT_EQ(again.stats().files, 4u);
  for (const auto& e : fs::directory_iterator(tier)) {
    EXPECT_FALSE(fs::is_symlink(e.symlink_status())) << e.path();
  }
  EXPECT_EQ(baton::testing::read_file(target), precious);
  EXPECT_TRUE(fs::exists(fs::path(outside.path()) / "real" /
                         segment_file_name(layout.fingerprint, elsewhere[0].hash)));
}

TEST(DiskHostile, ASegmentSwappedForALinkAfterTheScanIsNotRead) {
  ScratchDir dir, outside;
  const auto layout = testing::test_layout();
  const auto a = chain(layout, 2, 0);
  DiskStore s(options(dir.path()));
  ASSERT_TRUE(save_chain(s, a));
  const fs::path seg = fs::path(dir.path()) / segment_file_name(layout.fingerprint, a[0].hash);
  const fs::path copy = fs::path(outside.path()) / "copy";
  fs::copy_file(seg, copy);
  fs::remove(seg);
  fs::create_symlink(copy, seg);
  EXPECT_EQ(load_chain(s, a), 0u);
  EXPECT_EQ(s.stats().errors.at("io"), 1u);
  EXPECT_FALSE(fs::exists(fs::symlink_status(seg))) << "the link is removed";
  EXPECT_TRUE(fs::exists(copy)) << "its target is not";
}

TEST(DiskHostile, AFifoUnderASegmentsNameDoesNotStallTheStart) {
  ScratchDir dir;
  const std::string fifo = dir.path() + "/kv-fifo.kvseg";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  DiskStore s(options(dir.path()));  // an open that waited for a writer would hang here
  EXPECT_EQ(s.stats().errors.at("io"), 1u);
  EXPECT_EQ(s.stats().files, 0u);
}

std::string refusal(const std::string& dir) {
  try {
    DiskStore s(options(dir));
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

// The lock file replicas share the directory by: a link planted under its name is removed, not
// written or locked through; a FIFO there does not stall the start; either way the tier starts
// with a plain lock file of its own and works.
TEST(DiskHostile, WhatIsPlantedUnderTheLockFilesNameIsReplaced) {
  ScratchDir dir, outside;
  const std::string lock = dir.path() + "/" + kDiskLockName;
  const std::string target = outside.path() + "/precious";
  std::ofstream(target) << "keep me";
  fs::create_symlink(target, lock);
  const auto a = chain(testing::test_layout(), 2, 0);
  {
    DiskStore s(options(dir.path()));
    ASSERT_TRUE(save_chain(s, a));
    EXPECT_EQ(load_chain(s, a), 2u);
  }
  EXPECT_FALSE(fs::is_symlink(fs::symlink_status(lock))) << "the link was replaced";
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(lock)));
  EXPECT_EQ(baton::testing::read_file(target), "keep me") << "its target was never written";
  fs::remove(lock);
  ASSERT_EQ(::mkfifo(lock.c_str(), 0600), 0);
  DiskStore again(options(dir.path()));  // an open that waited for a writer would hang here
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(lock)));
  EXPECT_EQ(load_chain(again, a), 2u);
}

TEST(DiskHostile, ADirectoryOthersCanWriteIsRefusedWithTheFix) {
  ScratchDir dir;
  for (mode_t mode : {0777, 0770, 0722, 01777}) {
    const std::string d = dir.path() + "/shared";
    fs::create_directory(d);
    ASSERT_EQ(::chmod(d.c_str(), mode), 0);
    const std::string why = refusal(d);
    EXPECT_NE(why.find("chmod 700 " + d), std::string::npos) << std::oct << mode << ": " << why;
    EXPECT_NE(why.find("--kv-disk-dir"), std::string::npos) << why;
    ASSERT_EQ(::chmod(d.c_str(), 0700), 0);
    EXPECT_EQ(refusal(d), "") << "once fixed, it opens";
  }
  // A link the user names is followed, and where it leads is checked alike.
  const std::string link = dir.path() + "/link";
  fs::create_directory_symlink(dir.path() + "/shared", link);
  EXPECT_EQ(refusal(link), "");
  ASSERT_EQ(::chmod((dir.path() + "/shared").c_str(), 0777), 0);
  EXPECT_NE(refusal(link).find("chmod 700"), std::string::npos);
}

TEST(DiskHostile, ADirectoryTheTierCreatesIsPrivate) {
  ScratchDir dir;
  const mode_t old = ::umask(0);  // even with a permissive umask
  const std::string d = dir.path() + "/a/b/tier";
  std::optional<DiskStore> s;
  EXPECT_NO_THROW(s.emplace(options(d)));
  ::umask(old);
  struct stat st {};
  ASSERT_EQ(::stat(d.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_TRUE(s);
  ASSERT_TRUE(save_chain(*s, chain(testing::test_layout(), 1, 0)));
  for (const auto& e : fs::directory_iterator(d)) {
    ASSERT_EQ(::stat(e.path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u) << e.path();
  }
}

TEST(DiskHostile, ADirectoryOfAnotherUserIsRefusedWithTheFix) {
  ScratchDir dir;
  const std::string d = dir.path() + "/theirs";
  ASSERT_TRUE(fs::create_directory(d));
  ASSERT_EQ(::chmod(d.c_str(), 0700), 0);
  const uid_t other = ::geteuid() == 65534 ? 65533 : 65534;
  if (::chown(d.c_str(), other, static_cast<gid_t>(-1)) != 0) {
    GTEST_SKIP() << "giving a directory to another uid needs root (" << std::strerror(errno) << ")";
  }
  const std::string why = refusal(d);
  EXPECT_NE(why.find("belongs to uid " + std::to_string(other)), std::string::npos) << why;
  EXPECT_NE(why.find("chown " + std::to_string(::geteuid()) + " " + d), std::string::npos) << why;
}

}  // namespace
}  // namespace baton::kv
