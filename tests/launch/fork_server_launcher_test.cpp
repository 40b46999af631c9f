// What only the fork server does: every trial a fresh fork of the loaded plugin, the server's
// death survived, a bad plugin refused with the reason. (Everything a trial shares with a spawned
// one runs in spawn_launcher_test.cpp for both launchers.)
#include "launch/fork_server_launcher.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "launch/spawn_launcher.hpp"
#include "support/temp_dir.hpp"

namespace cleansweep {
namespace {

using testing::TempDir;

// Resident memory of `pid` in KiB (VmRSS), or -1.
std::int64_t ResidentKb(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::atoll(line.c_str() + 6);
  }
  return -1;
}

class ForkServerLauncherTest : public ::testing::Test {
 protected:
  void SetUp() override { ::signal(SIGPIPE, SIG_IGN); }

  LaunchSpec Spec(const std::string& mode, int number, const std::string& params = "{}") {
    LaunchSpec spec;
    spec.argv = {TOY_PLUGIN};
    spec.trial_dir = dir_.File("trial-" + std::to_string(number));
    spec.env = {{"CLEANSWEEP_PARAMS", params},
                {"CLEANSWEEP_TRIAL", std::to_string(number)},
                {"CLEANSWEEP_TRIAL_DIR", spec.trial_dir},
                {"CLEANSWEEP_REPORT_FD", "3"},
                {"CLEANSWEEP_CONTROL_FD", "4"},
                {"TOY_MODE", mode}};
    spec.kill_grace = Millis(500);
    return spec;
  }

  TrialOutcome Run(std::unique_ptr<TrialProcess> trial) {
    std::vector<StepValue> steps;
    while (!trial->Finished()) trial->Poll(Millis(1000), &steps);
    return trial->Outcome();
  }

  TrialOutcome RunToEnd(const LaunchSpec& spec) {
    Result<std::unique_ptr<TrialProcess>> trial = launcher_.Start(spec);
    EXPECT_TRUE(trial.ok()) << trial.status().message();
    return trial.ok() ? Run(std::move(*trial)) : TrialOutcome();
  }

  TempDir dir_;
  ChildRegistry children_;  // the worker's, in a worker; outlives the launchers
  ForkServerLauncher launcher_{&children_, FORK_SERVER, TOY_PLUGIN};
};

// Each trial counts itself in a global and leaves 64 MiB it never frees. Forked from the server,
// every one must see the count at zero and the state cleansweep_trial_prepare() left (42), in a
// process of its own, while the server itself stays the size it was.
TEST_F(ForkServerLauncherTest, EveryTrialStartsFromTheLoadedPluginNotFromTheLastTrial) {
  ASSERT_TRUE(launcher_.StartServer().ok());
  const pid_t server = launcher_.server_pid();
  std::set<double> pids;
  std::int64_t rss_after_first = 0;
  for (int i = 0; i < 50; ++i) {
    const TrialOutcome o = RunToEnd(Spec("fresh", i));
    ASSERT_EQ(o.state, TrialState::kComplete) << "trial " << i << ": " << o.reason << "\n" << o.output_tail;
    ASSERT_TRUE(o.value);
    EXPECT_EQ(*o.value, 0.0) << "trial " << i << " saw the counter of an earlier trial";
    EXPECT_NE(o.attrs_json.find("\"prepared\":42"), std::string::npos) << o.attrs_json;
    EXPECT_GT(o.peak_rss_kb, 64 << 10) << "the 64 MiB were not resident in the trial";
    const size_t at = o.attrs_json.find("\"pid\":");
    ASSERT_NE(at, std::string::npos);
    pids.insert(std::atof(o.attrs_json.c_str() + at + 6));
    if (i == 0) rss_after_first = ResidentKb(server);
  }
  EXPECT_EQ(pids.size(), 50u) << "every trial is a process of its own";
  EXPECT_EQ(pids.count(static_cast<double>(server)), 0u);
  EXPECT_EQ(launcher_.server_pid(), server) << "one server served all 50";
  EXPECT_EQ(launcher_.restarts(), 0);
  const std::int64_t rss_after_last = ResidentKb(server);
  ASSERT_GT(rss_after_first, 0);
  // 50 trials leaked 3.2 GiB between them; none of it may be the server's.
  EXPECT_LT(rss_after_last - rss_after_first, 4 << 10)
      << "the server grew from " << rss_after_first << " KiB to " << rss_after_last << " KiB";
}

// The trial is the worker's child (CLONE_PARENT), not the server's: it runs on and is classified
// when the server is killed under it, and the next trial gets a new server.
TEST_F(ForkServerLauncherTest, ATrialOutlivesAServerKilledUnderItAndTheNextTrialGetsANewServer) {
  Result<std::unique_ptr<TrialProcess>> running =
      launcher_.Start(Spec("curve", 1, R"({"q": 0.8, "steps": 5, "step_sleep": 0.1})"));
  ASSERT_TRUE(running.ok()) << running.status().message();
  const pid_t first = launcher_.server_pid();
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  const TrialOutcome o = Run(std::move(*running));
  EXPECT_EQ(o.state, TrialState::kComplete) << o.reason;
  ASSERT_TRUE(o.value);
  EXPECT_DOUBLE_EQ(*o.value, 0.8);
  const TrialOutcome next = RunToEnd(Spec("ok", 2, R"({"x": 0.3, "n": 4})"));
  EXPECT_EQ(next.state, TrialState::kComplete) << next.reason;
  EXPECT_NE(launcher_.server_pid(), first);
  EXPECT_EQ(launcher_.restarts(), 1);
  EXPECT_NE(::kill(first, 0), 0) << "the dead server was not reaped";
}

TEST_F(ForkServerLauncherTest, AServerThatDiedBetweenTrialsIsReplacedAndNoTrialIsLost) {
  ASSERT_TRUE(launcher_.StartServer().ok());
  const pid_t first = launcher_.server_pid();
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  for (int i = 0; i < 3; ++i) {
    const TrialOutcome o = RunToEnd(Spec("ok", i, R"({"x": 0.3, "n": 4})"));
    EXPECT_EQ(o.state, TrialState::kComplete) << o.reason;
  }
  EXPECT_EQ(launcher_.restarts(), 1);
}

// Issue 19, trial.prefork: a trial begins as the standby child that waited for it (a fresh fork of
// the loaded plugin like any other), and the next standby is forked while it runs.
class PreforkTest : public ForkServerLauncherTest {
 protected:
  ForkServerLauncher preforked_{&children_, FORK_SERVER, TOY_PLUGIN, Millis(300'000), SystemClock::Get(), true};

  TrialOutcome RunPreforked(const LaunchSpec& spec) {
    Result<std::unique_ptr<TrialProcess>> trial = preforked_.Start(spec);
    EXPECT_TRUE(trial.ok()) << trial.status().message();
    return trial.ok() ? Run(std::move(*trial)) : TrialOutcome();
  }
};

double PidOf(const TrialOutcome& o) {  // the pid the toy trial put in its attrs
  const size_t at = o.attrs_json.find("\"pid\":");
  return at == std::string::npos ? -1 : std::atof(o.attrs_json.c_str() + at + 6);
}

std::string CommandLine(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text.substr(0, text.find('\0'));
}

TEST_F(PreforkTest, EachTrialIsTheStandbyThatWaitedForItAndStartsFresh) {
  ASSERT_TRUE(preforked_.StartServer().ok());
  for (int i = 0; i < 20; ++i) {
    const pid_t standby = preforked_.standby_pid();
    ASSERT_GT(standby, 0) << "no standby before trial " << i;
    // The worker's own child, waiting, named for what it is.
    ASSERT_EQ(ReadProcessStat(standby)->ppid, ::getpid());
    if (i == 0) {  // it names itself once it runs
      for (int wait = 0; wait < 100 && CommandLine(standby).rfind("cleansweep-standby", 0) != 0; ++wait) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      EXPECT_EQ(CommandLine(standby), "cleansweep-standby toy_plugin.so");
    }
    const TrialOutcome o = RunPreforked(Spec("fresh", i));
    ASSERT_EQ(o.state, TrialState::kComplete) << "trial " << i << ": " << o.reason << "\n" << o.output_tail;
    EXPECT_EQ(*o.value, 0.0) << "trial " << i << " saw the counter of an earlier trial";
    EXPECT_NE(o.attrs_json.find("\"prepared\":42"), std::string::npos) << o.attrs_json;
    EXPECT_EQ(PidOf(o), static_cast<double>(standby)) << "trial " << i << " was not the standby";
    EXPECT_NE(preforked_.standby_pid(), standby) << "no new standby was forked while trial " << i << " ran";
  }
  EXPECT_EQ(preforked_.standby_starts(), 20);
  EXPECT_EQ(preforked_.restarts(), 0);
}

TEST_F(PreforkTest, AStandbyKilledWhileItWaitedIsReplacedAndTheTrialForkedInstead) {
  ASSERT_TRUE(preforked_.StartServer().ok());
  const pid_t standby = preforked_.standby_pid();
  ASSERT_GT(standby, 0);
  ASSERT_EQ(::kill(standby, SIGKILL), 0);
  const TrialOutcome o = RunPreforked(Spec("ok", 1, R"({"x": 0.3, "n": 4})"));
  EXPECT_EQ(o.state, TrialState::kComplete) << o.reason;
  EXPECT_NE(PidOf(o), static_cast<double>(standby));
  EXPECT_EQ(preforked_.standby_starts(), 0);
  EXPECT_GT(preforked_.standby_pid(), 0) << "the next trial has a standby again";
  EXPECT_NE(::kill(standby, 0), 0) << "the dead standby was not reaped";
}

TEST_F(PreforkTest, TheStandbyOfAServerThatDiedGoesWithIt) {
  ASSERT_TRUE(preforked_.StartServer().ok());
  const pid_t standby = preforked_.standby_pid();
  const pid_t server = preforked_.server_pid();
  ASSERT_EQ(::kill(server, SIGKILL), 0);
  for (int wait = 0; wait < 200 && ReadProcessStat(server)->state != 'Z'; ++wait) {  // dead, not yet reaped
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const TrialOutcome o = RunPreforked(Spec("ok", 1, R"({"x": 0.3, "n": 4})"));
  EXPECT_EQ(o.state, TrialState::kComplete) << o.reason;
  EXPECT_EQ(preforked_.restarts(), 1);
  EXPECT_NE(::kill(standby, 0), 0) << "the old server's standby is still there";
  EXPECT_NE(PidOf(o), static_cast<double>(standby));
  EXPECT_EQ(preforked_.standby_starts(), 1) << "the new server's standby ran the trial";
  EXPECT_GT(preforked_.standby_pid(), 0);
}

// The server is stopped (SIGSTOP) with a standby request of ours unanswered: the next trial's
// start finds it stopped, kills it and starts a new one. (Once, a server buried twice here had the
// worker signal pid -1: every process it could reach.)
TEST_F(PreforkTest, AServerStoppedWithAStandbyRequestPendingIsReplaced) {
  ASSERT_TRUE(preforked_.StartServer().ok());
  const pid_t first = preforked_.server_pid();
  ASSERT_EQ(::kill(first, SIGSTOP), 0);
  // Runs from the standby that was waiting; asks the stopped server for the next one.
  const TrialOutcome one = RunPreforked(Spec("ok", 1, R"({"x": 0.3, "n": 4})"));
  EXPECT_EQ(one.state, TrialState::kComplete) << one.reason;
  const TrialOutcome two = RunPreforked(Spec("ok", 2, R"({"x": 0.3, "n": 4})"));
  EXPECT_EQ(two.state, TrialState::kComplete) << two.reason;
  EXPECT_EQ(preforked_.restarts(), 1);
  EXPECT_NE(preforked_.server_pid(), first);
  EXPECT_NE(::kill(first, 0), 0) << "the stopped server was not killed and reaped";
  EXPECT_EQ(preforked_.standby_starts(), 2);
}

TEST_F(PreforkTest, NoStandbyOutlivesItsLauncherOrItsWorker) {
  pid_t standby = -1;
  {
    ForkServerLauncher launcher(&children_, FORK_SERVER, TOY_PLUGIN, Millis(300'000), SystemClock::Get(), true);
    ASSERT_TRUE(launcher.StartServer().ok());
    standby = launcher.standby_pid();
    ASSERT_GT(standby, 0);
  }
  EXPECT_NE(::kill(standby, 0), 0) << "the standby outlived its launcher (or was not reaped)";

  // A worker killed by SIGKILL: its standby dies with it (PR_SET_PDEATHSIG, and the guard).
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const pid_t worker = ::fork();
  if (worker == 0) {
    ChildRegistry children;
    if (!children.StartGuard().ok()) ::_exit(1);
    ForkServerLauncher launcher(&children, FORK_SERVER, TOY_PLUGIN, Millis(300'000), SystemClock::Get(), true);
    if (!launcher.StartServer().ok()) ::_exit(2);
    const pid_t pid = launcher.standby_pid();
    (void)!::write(pipe_fds[1], &pid, sizeof pid);
    ::pause();
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  pid_t orphan = -1;
  ASSERT_EQ(::read(pipe_fds[0], &orphan, sizeof orphan), static_cast<ssize_t>(sizeof orphan));
  ::close(pipe_fds[0]);
  ASSERT_GT(orphan, 0);
  ::kill(worker, SIGKILL);
  int status;
  ::waitpid(worker, &status, 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    const std::optional<ProcessStat> stat = ReadProcessStat(orphan);
    gone = !stat || stat->state == 'Z';
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(gone) << "standby " << orphan << " outlived its worker";
  if (!gone) ::kill(orphan, SIGKILL);
}

TEST_F(ForkServerLauncherTest, AMissingPluginIsRefusedWithTheReason) {
  ForkServerLauncher launcher(&children_, FORK_SERVER, dir_.File("no-such-plugin.so"));
  const Status status = launcher.StartServer();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("could not load " + dir_.File("no-such-plugin.so")), std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("No such file"), std::string::npos) << status.message();
  EXPECT_EQ(launcher.server_pid(), -1) << "the failed server was left running";
}

TEST_F(ForkServerLauncherTest, ALibraryWithoutTheEntryPointIsNotAPlugin) {
  ForkServerLauncher launcher(&children_, FORK_SERVER, FAKE_NVML);
  const Status status = launcher.StartServer();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("is not a cleansweep trial plugin"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("CLEANSWEEP_TRIAL_PLUGIN"), std::string::npos) << status.message();
}

TEST_F(ForkServerLauncherTest, APrepareHookThatFailsStopsTheServerWithItsCode) {
  ::setenv("TOY_PREPARE_FAILS", "1", 1);  // the server inherits the worker's environment
  ForkServerLauncher launcher(&children_, FORK_SERVER, TOY_PLUGIN);
  const Status status = launcher.StartServer();
  ::unsetenv("TOY_PREPARE_FAILS");
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cleansweep_trial_prepare() returned 7"), std::string::npos) << status.message();
}

// Environment variables for the servers a test starts (they inherit the worker's environment).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) { ::setenv(name, value.c_str(), 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

bool Alive(pid_t pid) {  // a zombie counts as gone
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

TEST_F(ForkServerLauncherTest, APrepareThatHangsEndsAtThePrepareTimeoutWithThePluginNamed) {
  const ScopedEnv hang("TOY_PREPARE_SLEEP", "600");
  ForkServerLauncher launcher(&children_, FORK_SERVER, TOY_PLUGIN, Millis(300));
  const Status status = launcher.StartServer();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), std::string("trial.launcher forkserver: the fork server (") + FORK_SERVER +
                                  ") could not load " + TOY_PLUGIN +
                                  ": it did not answer within 300ms while loading the plugin and running its "
                                  "cleansweep_trial_prepare() (trial.prepare_timeout is 300ms); the server was killed");
  EXPECT_EQ(launcher.server_pid(), -1);
}

TEST_F(ForkServerLauncherTest, WhatPrepareStartedDiesWithTheServer) {
  ASSERT_TRUE(children_.AdoptOrphans().ok());  // as a worker does
  const std::string pids_file = dir_.File("prepare-pids");
  std::vector<pid_t> pids;
  {
    const ScopedEnv children("TOY_PREPARE_CHILDREN", pids_file);
    ForkServerLauncher launcher(&children_, FORK_SERVER, TOY_PLUGIN);
    ASSERT_TRUE(launcher.StartServer().ok());
    for (int i = 0; i < 200 && pids.size() < 2; ++i) {  // the sleepers write their pids themselves
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      pids.clear();
      std::ifstream in(pids_file);
      for (pid_t pid; in >> pid;) pids.push_back(pid);
    }
    ASSERT_EQ(pids.size(), 2u);
    for (pid_t pid : pids) EXPECT_TRUE(Alive(pid));
    EXPECT_EQ(RunToEnd(Spec("ok", 1, R"({"x": 0.3, "n": 4})")).state, TrialState::kComplete);
    for (pid_t pid : pids) EXPECT_TRUE(Alive(pid)) << "a trial's end killed the server's helpers";
  }  // the worker is done with the server
  for (pid_t pid : pids) EXPECT_FALSE(Alive(pid)) << pid << " (started by prepare()) outlived its server";
}

// A data set loaded by prepare() is shared by every forked trial: it is in a trial's peak RSS,
// but trial.memory_limit caps what the trial itself allocates.
TEST_F(ForkServerLauncherTest, MemoryPreparedBeforeTheForkIsNotChargedToTheTrial) {
  const ScopedEnv ballast("TOY_PREPARE_MB", "256");
  ForkServerLauncher launcher(&children_, FORK_SERVER, TOY_PLUGIN);
  const auto run = [&](const std::string& mode, int number) {
    LaunchSpec spec = Spec(mode, number, R"({"x": 0.3, "n": 4})");
    spec.memory_limit_bytes = 128 << 20;  // half of what the server holds
    Result<std::unique_ptr<TrialProcess>> trial = launcher.Start(spec);
    EXPECT_TRUE(trial.ok()) << trial.status().message();
    return trial.ok() ? Run(std::move(*trial)) : TrialOutcome();
  };
  const TrialOutcome ok = run("ok", 1);
  EXPECT_EQ(ok.state, TrialState::kComplete) << ok.reason;
  EXPECT_GE(ok.peak_rss_kb, 256 << 10);  // the shared pages are resident in it
  const TrialOutcome crash = run("crash", 2);
  EXPECT_EQ(crash.state, TrialState::kCrash) << crash.reason;  // not OOM_HOST: it used little of its own
  const TrialOutcome hog = run("hog", 3);
  EXPECT_EQ(hog.state, TrialState::kOomHost) << hog.reason;  // its own allocations still meet the limit
}

TEST_F(ForkServerLauncherTest, AStoppedServerIsReplacedAtOnceAndTheTrialRunsOnTheNewOne) {
  ASSERT_TRUE(launcher_.StartServer().ok());
  const pid_t stopped = launcher_.server_pid();
  ASSERT_EQ(::kill(stopped, SIGSTOP), 0);
  LaunchSpec spec = Spec("ok", 1, R"({"x": 0.3, "n": 4})");
  spec.timeout = Millis(5000);  // what a wait for the stopped server would have used up
  const TrialOutcome o = RunToEnd(spec);
  EXPECT_EQ(o.state, TrialState::kComplete) << o.reason;
  EXPECT_EQ(launcher_.restarts(), 1);
  EXPECT_NE(launcher_.server_pid(), stopped);
  EXPECT_FALSE(Alive(stopped));
}

// A CUDA context holds /dev/nvidia* open, and a forked child cannot use its parent's context: a
// plugin whose loading opened one is refused. (A file of that name stands in for the device.)
TEST_F(ForkServerLauncherTest, APluginThatInitialisedCudaWhileLoadingIsRefused) {
  const std::string device = "/dev/nvidia-cleansweep-test-" + std::to_string(::getpid());
  { std::ofstream make(device); }
  if (::access(device.c_str(), R_OK) != 0) GTEST_SKIP() << "cannot create " << device << " (not root)";
  ::setenv("TOY_PREPARE_OPEN", device.c_str(), 1);
  ForkServerLauncher launcher(&children_, FORK_SERVER, TOY_PLUGIN);
  const Status status = launcher.StartServer();
  ::unsetenv("TOY_PREPARE_OPEN");
  std::remove(device.c_str());
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("initialised CUDA while loading"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find(device), std::string::npos) << status.message();
}

// A trial that cannot start at all (the server is gone and cannot be started again) is an error
// the worker records as the trial's failure, with the reason.
TEST_F(ForkServerLauncherTest, AServerThatCannotBeStartedAgainFailsTheStartWithTheReason) {
  ForkServerLauncher launcher(&children_, dir_.File("no-such-server"), TOY_PLUGIN);
  Result<std::unique_ptr<TrialProcess>> trial = launcher.Start(Spec("ok", 1));
  ASSERT_FALSE(trial.ok());
  EXPECT_NE(trial.status().message().find("could not load"), std::string::npos) << trial.status().message();
}

}  // namespace
}  // namespace cleansweep
