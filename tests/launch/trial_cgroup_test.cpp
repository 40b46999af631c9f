// The cgroup v2 file protocol against a fake /proc and a fake cgroup file system in a temporary
// folder. (What the kernel does with the files is tested where cgroups v2 are usable, in
// spawn_launcher_test.cpp.)
#include "launch/trial_cgroup.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace cleansweep {
namespace {

using testing::ReadFile;
using testing::TempDir;

// A fake /proc saying this process lives in cgroup /job/step of a cgroup2 mount at `root`.
std::string FakeProc(TempDir& dir, const std::string& root) {
  std::filesystem::create_directories(dir.File("proc/self"));
  dir.Write("proc/self/cgroup", "0::/job/step\n");
  dir.Write("proc/self/mountinfo",
            "22 1 0:21 / /proc rw,nosuid - proc proc rw\n"
            "35 25 0:30 / " +
                root + " rw,nosuid,nodev - cgroup2 cgroup2 rw,nsdelegate\n");
  return dir.File("proc");
}

TEST(TrialCgroup, FindsTheCgroupAndSetsTheMemoryLimitWhereTheControllerIsDelegated) {
  TempDir dir;
  const std::string root = dir.File("cgroup");
  const std::string own = root + "/job/step";
  std::filesystem::create_directories(own);
  dir.Write("cgroup/job/step/cgroup.procs", "");
  dir.Write("cgroup/job/step/cgroup.controllers", "cpu memory pids\n");
  dir.Write("cgroup/job/step/cgroup.subtree_control", "");
  // The kernel would fill the new base folder; the fake one gets its files in advance.
  const std::string base_dir = own + "/cleansweep-" + std::to_string(::getpid());
  std::filesystem::create_directories(base_dir);
  dir.Write(base_dir.substr(dir.File("").size()) + "/cgroup.controllers", "memory\n");
  dir.Write(base_dir.substr(dir.File("").size()) + "/cgroup.subtree_control", "");

  std::string why;
  std::optional<CgroupBase> base = SetUpCgroupBase(FakeProc(dir, root), &why);
  ASSERT_TRUE(base) << why;
  EXPECT_EQ(base->dir, base_dir);
  EXPECT_TRUE(base->memory);
  EXPECT_EQ(ReadFile(base_dir + "/cgroup.subtree_control"), "+memory");

  std::filesystem::create_directories(base_dir + "/trial-0");
  dir.Write(base_dir.substr(dir.File("").size()) + "/trial-0/cgroup.procs", "");
  dir.Write(base_dir.substr(dir.File("").size()) + "/trial-0/memory.max", "max\n");
  dir.Write(base_dir.substr(dir.File("").size()) + "/trial-0/memory.events",
            "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n");
  Result<TrialCgroup> cgroup = TrialCgroup::Create(*base, "trial-0", 256 << 20);
  ASSERT_TRUE(cgroup.ok()) << cgroup.status().message();
  EXPECT_TRUE(cgroup->memory_limited());
  EXPECT_EQ(ReadFile(base_dir + "/trial-0/memory.max"), "268435456");
  EXPECT_EQ(cgroup->OomKills(), 1);
  EXPECT_GE(cgroup->procs_fd(), 0);
  ASSERT_EQ(::write(cgroup->procs_fd(), "0", 1), 1);  // what the trial does before exec
  EXPECT_EQ(ReadFile(base_dir + "/trial-0/cgroup.procs"), "0");
}

TEST(TrialCgroup, WithoutTheMemoryControllerTheLimitIsLeftToTheRlimit) {
  TempDir dir;
  const std::string root = dir.File("cgroup");
  std::filesystem::create_directories(root + "/job/step");
  dir.Write("cgroup/job/step/cgroup.procs", "");
  dir.Write("cgroup/job/step/cgroup.controllers", "cpu pids\n");
  std::string why;
  std::optional<CgroupBase> base = SetUpCgroupBase(FakeProc(dir, root), &why);
  ASSERT_TRUE(base) << why;
  EXPECT_FALSE(base->memory);
  std::filesystem::create_directories(base->dir + "/trial-0");  // what the kernel would make
  std::ofstream(base->dir + "/trial-0/cgroup.procs") << "";
  Result<TrialCgroup> cgroup = TrialCgroup::Create(*base, "trial-0", 256 << 20);
  ASSERT_TRUE(cgroup.ok()) << cgroup.status().message();
  EXPECT_FALSE(cgroup->memory_limited());
  EXPECT_FALSE(std::filesystem::exists(base->dir + "/trial-0/memory.max"));
}

TEST(TrialCgroup, SaysWhyWhenThereIsNoUsableCgroup) {
  TempDir dir;
  std::filesystem::create_directories(dir.File("proc/self"));
  dir.Write("proc/self/cgroup", "4:memory:/x\n1:cpu:/\n");  // cgroup v1 only
  dir.Write("proc/self/mountinfo", "35 25 0:30 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n");
  std::string why;
  EXPECT_FALSE(SetUpCgroupBase(dir.File("proc"), &why));
  EXPECT_NE(why.find("no cgroup v2"), std::string::npos) << why;

  const std::string root = dir.File("ro");
  std::filesystem::create_directories(root + "/job/step");  // no cgroup.procs: not a cgroup
  dir.Write("proc/self/cgroup", "0::/job/step\n");
  dir.Write("proc/self/mountinfo", "35 25 0:30 / " + root + " rw - cgroup2 cgroup2 rw\n");
  EXPECT_FALSE(SetUpCgroupBase(dir.File("proc"), &why));
  EXPECT_NE(why.find("not writable"), std::string::npos) << why;
}

}  // namespace
}  // namespace cleansweep
