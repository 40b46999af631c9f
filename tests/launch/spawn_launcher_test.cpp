// The launchers against real child processes: the toy trial program misbehaves on request. Every
// test runs twice, with the toy trial spawned (SpawnLauncher) and with it forked by the fork server
// from its plugin build (ForkServerLauncher): both must treat a trial alike.
#include "launch/spawn_launcher.hpp"

#include "launch/child_trial.hpp"
#include "launch/fork_server_launcher.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include <gtest/gtest.h>

#include "util/utf8.hpp"

#include "support/manual_clock.hpp"
#include "support/temp_dir.hpp"

namespace cleansweep {
namespace {

using testing::ManualClock;

using testing::ReadFile;
using testing::TempDir;

// The pids a toy trial recorded in its folder (itself, and children it started).
std::vector<pid_t> RecordedPids(const std::string& trial_dir) {
  std::vector<pid_t> pids;
  std::ifstream in(trial_dir + "/pids.txt");
  for (int pid; in >> pid;) pids.push_back(pid);
  return pids;
}

// Alive and not a zombie.
bool Alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

// Waits up to 5 s for every pid to be gone; returns those still alive.
std::vector<pid_t> Survivors(const std::vector<pid_t>& pids) {
  std::vector<pid_t> alive;
  for (int i = 0; i < 100; ++i) {
    alive.clear();
    for (pid_t p : pids) {
      if (Alive(p)) alive.push_back(p);
    }
    if (alive.empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (pid_t p : alive) ::kill(p, SIGKILL);  // leave nothing behind, whatever the verdict
  return alive;
}

// The launcher a test parameter names: "spawn", "forkserver", or "preforked" (a fork server whose
// trials each begin as a standby child forked ahead of them: trial.prefork).
std::unique_ptr<Launcher> MakeLauncher(const std::string& kind, ChildRegistry* children,
                                       const Clock* clock = SystemClock::Get()) {
  if (kind == "spawn") return std::make_unique<SpawnLauncher>(children, clock);
  return std::make_unique<ForkServerLauncher>(children, FORK_SERVER, TOY_PLUGIN, Millis(300'000), clock,
                                              kind == "preforked");
}

class LauncherTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ::signal(SIGPIPE, SIG_IGN);  // as the worker does
    launcher_ = MakeLauncher(GetParam(), &children_);
  }
  void TearDown() override {
    // "preforked" must have tested trials that began as a standby, not quietly forked ones.
    const auto* server = dynamic_cast<const ForkServerLauncher*>(launcher_.get());
    if (GetParam() == "preforked" && server->server_pid() > 0) {
      EXPECT_GT(server->standby_starts(), 0) << "no trial here began as a standby";
    }
  }

  LaunchSpec Spec(const std::string& mode, const std::string& params = "{\"x\": 0.3, \"n\": 4}") {
    LaunchSpec spec;
    spec.argv = {GetParam() == "spawn" ? TOY_TRIAL : TOY_PLUGIN};
    spec.trial_dir = dir_.File("trial");
    spec.env = {{"CLEANSWEEP_PARAMS", params}, {"CLEANSWEEP_TRIAL", "7"},      {"CLEANSWEEP_TRIAL_DIR", spec.trial_dir},
                {"CLEANSWEEP_REPORT_FD", "3"}, {"CLEANSWEEP_CONTROL_FD", "4"}, {"TOY_MODE", mode}};
    spec.kill_grace = Millis(500);
    return spec;
  }

  // Runs the trial to its end and returns the outcome; `steps` gets its intermediate reports.
  TrialOutcome RunToEnd(const LaunchSpec& spec, std::vector<StepValue>* steps = nullptr) {
    Result<std::unique_ptr<TrialProcess>> trial = launcher_->Start(spec);
    EXPECT_TRUE(trial.ok()) << trial.status().message();
    std::vector<StepValue> local;
    while (!(*trial)->Finished()) (*trial)->Poll(Millis(1000), steps ? steps : &local);
    return (*trial)->Outcome();
  }

  TempDir dir_;
  ChildRegistry children_;  // the worker's, in a worker; outlives the launcher
  std::unique_ptr<Launcher> launcher_;
};

INSTANTIATE_TEST_SUITE_P(Launchers, LauncherTest, ::testing::Values("spawn", "forkserver", "preforked"),
                         [](const ::testing::TestParamInfo<std::string>& param) { return param.param; });

class SpawnLauncherTest : public LauncherTest {};  // the tests that only make sense for a spawned program
INSTANTIATE_TEST_SUITE_P(Spawn, SpawnLauncherTest, ::testing::Values("spawn"));

TEST_P(LauncherTest, CompleteTrialReportsEverything) {
  std::vector<StepValue> steps;
  const TrialOutcome o = RunToEnd(Spec("ok"), &steps);
  EXPECT_EQ(o.state, TrialState::kComplete) << o.reason;
  ASSERT_TRUE(o.value);
  EXPECT_DOUBLE_EQ(*o.value, 1.0);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_DOUBLE_EQ(steps[2].value, 1.0);
  EXPECT_EQ(o.last_step, 2);
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_EQ(o.signal, 0);
  EXPECT_GT(o.peak_rss_kb, 0);
  EXPECT_GE(o.end_time, o.start_time);
  EXPECT_EQ(o.attrs_json, R"({"mode":"ok","twice":2})");
  EXPECT_EQ(o.output_tail, "toy trial 7 mode ok\n");
  EXPECT_EQ(ReadFile(dir_.File("trial/log.txt")), "toy trial 7 mode ok\n");
}

// Issue 18: what a trial cost. The toy burns 0.3 s of its own CPU time; the launcher counts at least
// that (the cgroup's cpu.stat, or wait4's), and none of the worker's or the fork server's.
TEST_P(LauncherTest, RecordsTheCpuTimeTheTrialUsed) {
  const TrialOutcome o = RunToEnd(Spec("spin", R"({"x": 0.3, "spin_s": 0.3})"));
  EXPECT_EQ(o.state, TrialState::kComplete) << o.reason;
  EXPECT_GE(o.cpu_seconds, 0.3);
  EXPECT_LT(o.cpu_seconds, 2.0) << "more than the trial itself used";
  const TrialOutcome idle = RunToEnd(Spec("ok"));
  EXPECT_GE(idle.cpu_seconds, 0.0);
  EXPECT_LT(idle.cpu_seconds, 0.3) << "a trial that does nothing";
}

TEST_P(LauncherTest, NonZeroExitFails) {
  const TrialOutcome o = RunToEnd(Spec("fail"));
  EXPECT_EQ(o.state, TrialState::kFail);
  EXPECT_EQ(o.exit_code, 3);
  EXPECT_EQ(o.reason, "exited with status 3");
  EXPECT_NE(o.output_tail.find("toy: failing on purpose"), std::string::npos);  // stderr is captured too
}

TEST_P(LauncherTest, SignalIsACrash) {
  const TrialOutcome o = RunToEnd(Spec("crash"));
  EXPECT_EQ(o.state, TrialState::kCrash);
  EXPECT_EQ(o.signal, SIGSEGV);
  EXPECT_EQ(o.exit_code, -1);
  EXPECT_NE(o.reason.find("killed by signal 11"), std::string::npos) << o.reason;
}

TEST_P(LauncherTest, NoFinalValueFails) {
  const TrialOutcome o = RunToEnd(Spec("noreport"));
  EXPECT_EQ(o.state, TrialState::kFail);
  EXPECT_EQ(o.reason, "exited 0 without reporting a final value");
  // A gang's process other than rank 0 (docs/multi-gpu.md): rank 0 reports for the trial.
  LaunchSpec member = Spec("noreport");
  member.value_required = false;
  member.log_name = "log.rank-1.txt";
  const TrialOutcome done = RunToEnd(member);
  EXPECT_EQ(done.state, TrialState::kComplete) << done.reason;
  EXPECT_TRUE(std::filesystem::exists(member.trial_dir + "/log.rank-1.txt"));
  EXPECT_EQ(RunToEnd([&] {
              LaunchSpec s = Spec("fail");
              s.value_required = false;
              return s;
            }())
                .state,
            TrialState::kFail)
      << "a non-zero exit fails it all the same";
}

TEST_P(LauncherTest, OutOfMemoryReportIsClassified) {
  const TrialOutcome o = RunToEnd(Spec("oom"));
  EXPECT_EQ(o.state, TrialState::kOomGpu);
  EXPECT_EQ(o.exit_code, 75);
  EXPECT_NE(o.reason.find("CUDA out of memory"), std::string::npos);
}

TEST_P(LauncherTest, MalformedReportStopsTheTrialAtOnce) {
  const auto started = std::chrono::steady_clock::now();
  const TrialOutcome o = RunToEnd(Spec("malformed"));
  EXPECT_EQ(o.state, TrialState::kFail);
  EXPECT_NE(o.reason.find("protocol error: report line 4: not a JSON object: this is not json"), std::string::npos)
      << o.reason;
  EXPECT_EQ(o.signal, SIGTERM);  // it would have slept 30 s
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(25));
}

// Issue 15: this report line crashed the worker (SIGSEGV in a recursive JSON walk) and with it the
// whole MPI job, again on every resume.
TEST_P(LauncherTest, AReportNested100000DeepIsAProtocolFailNotACrash) {
  const TrialOutcome o = RunToEnd(Spec("deepattrs"));
  EXPECT_EQ(o.state, TrialState::kFail);
  EXPECT_NE(o.reason.find("JSON nested deeper than 64 levels"), std::string::npos) << o.reason;
}

// Issue 15: output lines were cut at byte 500 mid-character, so the export of the tail aborted.
TEST_P(LauncherTest, TheOutputTailIsCutOnCharacterBoundaries) {
  const TrialOutcome o = RunToEnd(Spec("utf8"));
  EXPECT_EQ(o.state, TrialState::kComplete) << o.reason;
  const size_t start = o.output_tail.find("\xE2\x82\xAC");  // after the toy's greeting line
  ASSERT_NE(start, std::string::npos) << o.output_tail;
  const std::string first = o.output_tail.substr(start, o.output_tail.find('\n', start) - start);
  std::string euros;  // 500 bytes hold 166 whole three-byte characters
  for (int i = 0; i < 166; ++i) euros += "\xE2\x82\xAC";
  EXPECT_EQ(first, euros + "...");
  EXPECT_TRUE(IsValidUtf8(first));
  EXPECT_NE(o.output_tail.find("not utf-8: \xFF\xFE\xC0"), std::string::npos);  // the trial's bytes, kept
}

TEST_P(LauncherTest, TimeoutKillsTheWholeProcessGroup) {
  LaunchSpec spec = Spec("grandchild");
  spec.timeout = Millis(300);
  Result<std::unique_ptr<TrialProcess>> trial = launcher_->Start(spec);
  ASSERT_TRUE(trial.ok());
  std::vector<StepValue> steps;
  while (!(*trial)->Finished()) (*trial)->Poll(Millis(1000), &steps);
  const TrialOutcome& o = (*trial)->Outcome();
  EXPECT_EQ(o.state, TrialState::kTimeout);
  EXPECT_EQ(o.reason, "ran past its timeout of 300ms");
  EXPECT_EQ(o.signal, SIGTERM);
  // The grandchild (sleep 600) shared the group: nothing of the group may be left.
  const std::vector<pid_t> pids = RecordedPids(spec.trial_dir);
  ASSERT_EQ(pids.size(), 2u) << "the trial and its grandchild";
  EXPECT_EQ(Survivors(pids), std::vector<pid_t>{}) << "a grandchild survived the timeout";
}

// The trial's deadlines and times come from the launcher's clock: an hour's timeout is tested by
// moving a clock on, not by waiting.
TEST_P(LauncherTest, DeadlinesAndTimesFollowTheLaunchersClock) {
  ManualClock clock;
  const std::unique_ptr<Launcher> launcher = MakeLauncher(GetParam(), &children_, &clock);
  LaunchSpec spec = Spec("hang");
  spec.timeout = std::chrono::hours(1);
  Result<std::unique_ptr<TrialProcess>> trial = launcher->Start(spec);
  ASSERT_TRUE(trial.ok()) << trial.status().message();
  std::vector<StepValue> steps;
  while (steps.size() < 3) (*trial)->Poll(Millis(1000), &steps);  // it is running for sure
  clock.Advance(std::chrono::minutes(59));
  for (int i = 0; i < 3; ++i) (*trial)->Poll(Millis(20), &steps);
  EXPECT_FALSE((*trial)->Finished()) << "stopped before its hour was up";
  clock.Advance(std::chrono::minutes(2));
  while (!(*trial)->Finished()) (*trial)->Poll(Millis(1000), &steps);
  const TrialOutcome& o = (*trial)->Outcome();
  EXPECT_EQ(o.state, TrialState::kTimeout);
  EXPECT_EQ(o.reason, "ran past its timeout of 1h00m");
  EXPECT_EQ(o.signal, SIGTERM);
  EXPECT_NEAR(o.end_time - o.start_time, 61 * 60, 1.0);
}

// A trial's time starts before a fork of the worker's own: on a loaded machine the child may run
// for a while before fork() returns. Through a fork server (which may first keep the worker waiting)
// it starts at the answer. The starter here stands for a fork that returns 5 s late.
TEST_P(SpawnLauncherTest, ATrialsTimeStartsBeforeItsForkButAfterAHelpersWait) {
  for (const bool forked_by_call : {true, false}) {
    ManualClock clock;
    const double before = clock.Now();
    const ChildStarter late_fork = [&](const ChildEnds&) -> Result<StartedChild> {
      const pid_t pid = ::fork();
      if (pid == 0) ::_exit(0);
      clock.Advance(std::chrono::seconds(5));
      return StartedChild{pid, 0, forked_by_call};
    };
    Result<std::unique_ptr<TrialProcess>> trial = StartChildTrial(Spec("ok"), &children_, &clock, late_fork);
    ASSERT_TRUE(trial.ok()) << trial.status().message();
    std::vector<StepValue> steps;
    while (!(*trial)->Finished()) (*trial)->Poll(Millis(1000), &steps);
    EXPECT_EQ((*trial)->Outcome().start_time, forked_by_call ? before : before + 5) << forked_by_call;
  }
}

TEST_P(LauncherTest, TrialIgnoringSigtermIsKilledAfterTheGrace) {
  LaunchSpec spec = Spec("ignoreterm");
  spec.timeout = Millis(200);
  spec.kill_grace = Millis(300);
  const TrialOutcome o = RunToEnd(spec);
  EXPECT_EQ(o.state, TrialState::kTimeout);
  EXPECT_EQ(o.signal, SIGKILL);
}

TEST_P(LauncherTest, StopInterruptsARunningTrial) {
  Result<std::unique_ptr<TrialProcess>> trial = launcher_->Start(Spec("hang"));
  ASSERT_TRUE(trial.ok());
  std::vector<StepValue> steps;
  while (steps.size() < 3) (*trial)->Poll(Millis(1000), &steps);  // it is running for sure
  (*trial)->Stop(TrialState::kInterrupted, "interrupted: test");
  while (!(*trial)->Finished()) (*trial)->Poll(Millis(1000), &steps);
  EXPECT_EQ((*trial)->Outcome().state, TrialState::kInterrupted);
  EXPECT_EQ((*trial)->Outcome().reason, "interrupted: test");
}

TEST_P(LauncherTest, OutputFloodIsCappedAndDoesNotBlock) {
  LaunchSpec spec = Spec("flood");
  spec.log_limit_bytes = 1 << 20;
  const TrialOutcome o = RunToEnd(spec);
  EXPECT_EQ(o.state, TrialState::kComplete) << o.reason;
  struct stat st {};
  ASSERT_EQ(::stat(dir_.File("trial/log.txt").c_str(), &st), 0);
  EXPECT_LT(st.st_size, (1 << 20) + 200 * 1024);
  EXPECT_NE(o.output_tail.find("flood done"), std::string::npos);
  EXPECT_NE(ReadFile(dir_.File("trial/log.txt")).find("flood done"), std::string::npos);
}

TEST_P(SpawnLauncherTest, MissingProgramFailsWithTheReason) {
  LaunchSpec spec = Spec("ok");
  spec.argv = {dir_.File("does-not-exist")};
  const TrialOutcome o = RunToEnd(spec);
  EXPECT_EQ(o.state, TrialState::kFail);
  EXPECT_NE(o.reason.find("No such file or directory"), std::string::npos) << o.reason;
}

// torchrun starts its processes with every inherited descriptor closed, and a number may then
// name another file. The header finds the trial's pipes again through the process above that
// holds them: here a shell that starts the toy with fd 3 on /dev/null and fd 4 closed (in the
// background: a shell redirects a foreground command's descriptors in itself, not only in the child).
TEST_P(SpawnLauncherTest, AProgramWhosePipesALauncherClosedReportsThroughItsParent) {
  LaunchSpec spec = Spec("ok");
  spec.argv = {"/bin/sh", "-c", "\"$0\" 3</dev/null 4<&- & wait $!", TOY_TRIAL};
  std::vector<StepValue> steps;
  const TrialOutcome o = RunToEnd(spec, &steps);
  EXPECT_EQ(o.state, TrialState::kComplete) << o.reason << o.output_tail;
  ASSERT_TRUE(o.value);
  EXPECT_DOUBLE_EQ(*o.value, 1.0);
  EXPECT_EQ(steps.size(), 3u);
  EXPECT_EQ(o.attrs_json, R"({"mode":"ok","twice":2})");
}

// The same, told to stop: the prune notice reaches it through the control pipe found again.
TEST_P(SpawnLauncherTest, AProgramWhosePipesALauncherClosedStillHearsAPrune) {
  LaunchSpec spec = Spec("curve", R"({"q": 0.9, "steps": 200, "step_sleep": 0.02})");
  spec.argv = {"/bin/sh", "-c", "\"$0\" 3</dev/null 4<&- & wait $!", TOY_TRIAL};
  Result<std::unique_ptr<TrialProcess>> trial = launcher_->Start(spec);
  ASSERT_TRUE(trial.ok()) << trial.status().message();
  std::vector<StepValue> steps;
  while (steps.empty() && !(*trial)->Finished()) (*trial)->Poll(Millis(100), &steps);
  (*trial)->RequestPrune("pruned by the test", Millis(60'000));  // no kill: it must stop by itself
  while (!(*trial)->Finished()) (*trial)->Poll(Millis(1000), &steps);
  const TrialOutcome o = (*trial)->Outcome();
  EXPECT_EQ(o.state, TrialState::kPruned) << o.reason << o.output_tail;
  EXPECT_NE(o.output_tail.find("pruned after step"), std::string::npos) << o.output_tail;
  EXPECT_LT(o.last_step, 200);
}

TEST_P(LauncherTest, ParametersReachTheTrial) {
  const TrialOutcome o = RunToEnd(Spec("ok", R"({"x": 0.5, "n": 6, "opt": "b"})"));
  ASSERT_TRUE(o.value);
  EXPECT_DOUBLE_EQ(*o.value, 1.0 - 0.04 - 0.04 + 0.05);
}

// Forks a worker (guard, optionally cgroups, one trial of `spec`), waits until the trial recorded
// `expect` pids, SIGKILLs the worker and returns those pids.
std::vector<pid_t> RunInAWorkerAndKillIt(const std::string& kind, const LaunchSpec& spec, bool cgroups, size_t expect) {
  const pid_t worker = ::fork();
  if (worker == 0) {
    ChildRegistry children;
    if (cgroups) children.UseCgroups();
    if (!children.StartGuard().ok()) ::_exit(1);
    const std::unique_ptr<Launcher> launcher = MakeLauncher(kind, &children);
    Result<std::unique_ptr<TrialProcess>> trial = launcher->Start(spec);
    if (!trial.ok()) ::_exit(2);
    std::vector<StepValue> steps;
    while (true) (*trial)->Poll(Millis(1000), &steps);
  }
  std::vector<pid_t> pids;
  for (int i = 0; i < 200 && pids.size() < expect; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    pids = RecordedPids(spec.trial_dir);
  }
  ::kill(worker, SIGKILL);
  int status;
  ::waitpid(worker, &status, 0);
  return pids;
}

TEST_P(LauncherTest, ChildrenThatLeftTheGroupAreKilledWhenTheTrialEnds) {
  ASSERT_TRUE(children_.AdoptOrphans().ok());
  const LaunchSpec spec = Spec("escape");
  const TrialOutcome o = RunToEnd(spec);
  EXPECT_EQ(o.state, TrialState::kComplete) << o.reason;
  const std::vector<pid_t> pids = RecordedPids(spec.trial_dir);
  ASSERT_EQ(pids.size(), 3u) << "the trial, its setsid child and that child's child";
  EXPECT_EQ(Survivors(pids), std::vector<pid_t>{});
}

TEST_P(LauncherTest, ATrialDiesWithItsWorkerEvenBySigkill) {
  const LaunchSpec spec = Spec("grandchild");
  const std::vector<pid_t> pids = RunInAWorkerAndKillIt(GetParam(), spec, /*cgroups=*/false, 2);
  ASSERT_EQ(pids.size(), 2u) << "the trial and the grandchild in its group should be running";
  // The trial goes by PR_SET_PDEATHSIG; its grandchild by the guard, which kills the group.
  EXPECT_EQ(Survivors(pids), std::vector<pid_t>{});
}

// Where this process may create cgroups v2 (as on the machine CI runs on), the guard also kills
// what left the trial's group and session: the gap that process groups alone leave.
TEST_P(LauncherTest, WithCgroupsATrialsWholeTreeDiesWithItsWorker) {
  const std::string isolation = children_.UseCgroups();
  children_.ReleaseCgroups();
  if (isolation.rfind("a cgroup v2 per trial", 0) != 0) GTEST_SKIP() << "no usable cgroup v2 here: " << isolation;
  const LaunchSpec spec = Spec("escape", R"({"x": 0.3, "n": 4, "sleep": 60})");  // escapes, then runs on
  const std::vector<pid_t> pids = RunInAWorkerAndKillIt(GetParam(), spec, /*cgroups=*/true, 3);
  ASSERT_EQ(pids.size(), 3u) << "the trial, its setsid child and that child's child";
  EXPECT_EQ(Survivors(pids), std::vector<pid_t>{});
}

TEST_P(LauncherTest, WithCgroupsATrialEndsWithNothingLeftAndItsCgroupRemoved) {
  const std::string isolation = children_.UseCgroups();
  if (isolation.rfind("a cgroup v2 per trial", 0) != 0) {
    children_.ReleaseCgroups();
    GTEST_SKIP() << "no usable cgroup v2 here: " << isolation;
  }
  ASSERT_TRUE(children_.AdoptOrphans().ok());  // as a worker does: what left comes back to us
  const LaunchSpec spec = Spec("escape");
  const TrialOutcome o = RunToEnd(spec);
  EXPECT_EQ(o.state, TrialState::kComplete) << o.reason;
  const std::vector<pid_t> pids = RecordedPids(spec.trial_dir);
  EXPECT_EQ(pids.size(), 3u);
  for (pid_t pid : pids) {  // gone, and reaped: no zombie piles up in a worker
    EXPECT_FALSE(std::filesystem::exists("/proc/" + std::to_string(pid))) << pid << " is still there";
  }
  EXPECT_EQ(Survivors(pids), std::vector<pid_t>{});
  const std::string base = "/sys/fs/cgroup";  // somewhere below: our base folder must be empty now
  children_.ReleaseCgroups();
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(base, ec); !ec && it != decltype(it)();
       it.increment(ec)) {
    EXPECT_EQ(it->path().filename().string().find("cleansweep-" + std::to_string(::getpid())), std::string::npos)
        << it->path() << " was left behind";
    if (it.depth() > 3) it.disable_recursion_pending();
  }
}

TEST_P(LauncherTest, AnAbortIsACrash) {
  const TrialOutcome o = RunToEnd(Spec("abort"));
  EXPECT_EQ(o.state, TrialState::kCrash) << o.reason;
  EXPECT_EQ(o.signal, SIGABRT);
}

TEST_P(LauncherTest, ASigkillWeDidNotSendReadsAsTheOomKiller) {
  const TrialOutcome o = RunToEnd(Spec("sigkill"));
  EXPECT_EQ(o.state, TrialState::kOomHost) << o.reason;
  EXPECT_NE(o.reason.find("OOM killer"), std::string::npos) << o.reason;
}

TEST_P(LauncherTest, AMemoryHogStopsAtTheLimitAsOomHost) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space: no RLIMIT_DATA fits it";
#endif
  LaunchSpec spec = Spec("hog");
  spec.memory_limit_bytes = 256 << 20;
  const TrialOutcome o = RunToEnd(spec);
  EXPECT_EQ(o.state, TrialState::kOomHost) << o.reason << "\n" << o.output_tail;
  EXPECT_NE(o.reason.find("memory limit"), std::string::npos) << o.reason;
  EXPECT_NE(o.reason.find("RLIMIT_DATA"), std::string::npos) << o.reason;
  EXPECT_LT(o.peak_rss_kb, 300 << 10) << "the limit did not hold";
}

TEST_P(LauncherTest, ArgumentsReachTheTrialByteForByteWithNoShell) {
  const std::vector<std::string> words = {
      "a b", "\"quoted\" 'single'", "$(touch pwned)", "; rm -rf /", "line1\nline2", "tab\there", "ünïcödé ✓", "*", "",
      "`id`"};
  LaunchSpec spec = Spec("echoargs");
  spec.argv.insert(spec.argv.end(), words.begin(), words.end());
  const TrialOutcome o = RunToEnd(spec);
  ASSERT_EQ(o.state, TrialState::kComplete) << o.reason;
  std::string expected;
  for (const std::string& w : words) expected += w + std::string(1, '\0');
  EXPECT_EQ(ReadFile(spec.trial_dir + "/args.bin"), expected);
  EXPECT_FALSE(std::filesystem::exists("pwned"));
}

TEST_P(LauncherTest, TheTrialFolderIsNotWorldWritableWhateverTheUmask) {
  const mode_t old = ::umask(0);
  const LaunchSpec spec = Spec("ok");
  const TrialOutcome o = RunToEnd(spec);
  ::umask(old);
  EXPECT_EQ(o.state, TrialState::kComplete);
  for (const std::string& path : {spec.trial_dir, spec.trial_dir + "/log.txt"}) {
    const auto perms = std::filesystem::status(path).permissions();
    EXPECT_EQ(perms & (std::filesystem::perms::others_write | std::filesystem::perms::group_write),
              std::filesystem::perms::none)
        << path;
  }
}

// Issue 36: CLEANSWEEP_CHECKPOINT_DIR names a folder that exists when the trial starts, so a trial
// written from docs/checkpoints.md alone can write into it. What an earlier attempt left under
// its name that is no folder (a file, a dangling link) makes way; a folder and its checkpoints stay.
// (Spawned only: a fork server's trials start through the same StartChildTrial.)
TEST_P(SpawnLauncherTest, TheCheckpointFolderExistsBeforeTheTrialStarts) {
  LaunchSpec spec = Spec("ok");
  const std::string checkpoints = spec.trial_dir + "/checkpoints";
  spec.env["CLEANSWEEP_CHECKPOINT_DIR"] = checkpoints;
  spec.argv = {"/bin/sh", "-c",
               "test -d \"$CLEANSWEEP_CHECKPOINT_DIR\" && echo 3 > \"$CLEANSWEEP_CHECKPOINT_DIR/step-3\" &&"
               " echo '{\"checkpoint\": 3, \"step\": 3, \"value\": 1}' >&3 && echo '{\"value\": 1}' >&3"};
  TrialOutcome o = RunToEnd(spec);
  EXPECT_EQ(o.state, TrialState::kComplete) << o.reason << o.output_tail;
  EXPECT_EQ(o.checkpoint_step, 3);
  EXPECT_EQ(ReadFile(checkpoints + "/step-3"), "3\n");
  EXPECT_EQ(std::filesystem::status(checkpoints).permissions() &
                (std::filesystem::perms::others_write | std::filesystem::perms::group_write),
            std::filesystem::perms::none);
  o = RunToEnd(spec);  // the next attempt: the folder and its checkpoint are kept
  EXPECT_EQ(o.state, TrialState::kComplete) << o.reason;
  EXPECT_EQ(ReadFile(checkpoints + "/step-3"), "3\n");
  std::filesystem::remove_all(checkpoints);
  std::ofstream(checkpoints) << "not a folder";
  o = RunToEnd(spec);
  EXPECT_EQ(o.state, TrialState::kComplete) << o.reason << o.output_tail;
  std::filesystem::remove_all(checkpoints);
  std::filesystem::create_symlink(dir_.File("nowhere"), checkpoints);
  o = RunToEnd(spec);
  EXPECT_EQ(o.state, TrialState::kComplete) << o.reason << o.output_tail;
  EXPECT_TRUE(std::filesystem::is_directory(std::filesystem::symlink_status(checkpoints)));
}

TEST(TrialEnvironment, DropsTheMpiLaunchersVariables) {
  ::setenv("OMPI_COMM_WORLD_RANK", "1", 1);
  ::setenv("PMIX_RANK", "1", 1);
  ::setenv("KEEP_ME", "yes", 1);
  const std::vector<std::string> env = TrialEnvironment({{"KEEP_ME", "override"}, {"NEW", "1"}});
  for (const std::string& e : env) {
    EXPECT_NE(e.rfind("OMPI_", 0), 0u) << e;
    EXPECT_NE(e.rfind("PMIX_", 0), 0u) << e;
    EXPECT_NE(e, "KEEP_ME=yes");
  }
  EXPECT_NE(std::find(env.begin(), env.end(), "KEEP_ME=override"), env.end());
  EXPECT_NE(std::find(env.begin(), env.end(), "NEW=1"), env.end());
}

}  // namespace
}  // namespace cleansweep
