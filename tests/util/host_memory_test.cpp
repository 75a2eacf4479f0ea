// The readers behind the memory plan: /proc/meminfo, /proc/self/cgroup and cgroup limit files
// as the kernel writes them, and this process's own figures.
#include "util/host_memory.h"

#include <gtest/gtest.h>

namespace baton::util {
namespace {

TEST(HostMemory, MeminfoFieldsAreBytes) {
  const std::string text =
      "MemTotal:       24609440 kB\nMemFree:        20000000 kB\nMemAvailable:   23000000 kB\n";
  EXPECT_EQ(meminfo_field(text, "MemTotal"), 24609440ull * 1024);
  EXPECT_EQ(meminfo_field(text, "MemAvailable"), 23000000ull * 1024);
  EXPECT_FALSE(meminfo_field(text, "Mem"));  // a prefix of a name is not the name
  EXPECT_FALSE(meminfo_field(text, "SwapTotal"));
  EXPECT_FALSE(meminfo_field("MemAvailable: lots kB\n", "MemAvailable"));
  EXPECT_EQ(meminfo_field("MemAvailable: 99999999999999999999999 kB\n", "MemAvailable"),
            kUnlimited);
}

TEST(HostMemory, CgroupPathPrefersTheV1MemoryController) {
  bool v1 = false;
  EXPECT_EQ(cgroup_memory_path("0::/user.slice/baton.service\n", v1), "/user.slice/baton.service");
  EXPECT_FALSE(v1);
  const std::string hybrid = "9:name=systemd:/\n4:memory:/jobs/42\n3:cpu,cpuacct:/\n0::/\n";
  EXPECT_EQ(cgroup_memory_path(hybrid, v1), "/jobs/42");
  EXPECT_TRUE(v1);
  EXPECT_EQ(cgroup_memory_path("5:cpuacct,memory:/a\n", v1), "/a");
  EXPECT_FALSE(cgroup_memory_path("", v1));
  EXPECT_FALSE(cgroup_memory_path("garbage\n", v1));
}

TEST(HostMemory, CgroupLimitsAndNoLimit) {
  EXPECT_EQ(cgroup_limit_value("1073741824\n"), 1073741824ull);
  EXPECT_FALSE(cgroup_limit_value("max\n"));
  EXPECT_FALSE(cgroup_limit_value("9223372036854771712\n"));  // v1's "unlimited"
  EXPECT_FALSE(cgroup_limit_value(""));
  const std::string stat = "cache 100\nrss 5\ntotal_cache 200\ntotal_rss 4096\n";
  EXPECT_EQ(memory_stat_field(stat, "total_rss"), 4096u);
  EXPECT_EQ(memory_stat_field(stat, "rss"), 5u);
  EXPECT_EQ(memory_stat_field("anon 123\nfile 9\n", "anon"), 123u);
  EXPECT_FALSE(memory_stat_field(stat, "anon"));
}

TEST(HostMemory, ThisProcessHasRoom) {
  const HostMemory m = read_host_memory();
  EXPECT_GT(m.mem_total, 0u);
  EXPECT_GT(m.resident_room, 0u);
  EXPECT_LE(m.resident_room, m.mem_total);
  EXPECT_FALSE(m.resident_source.empty());
}

}  // namespace
}  // namespace baton::util
