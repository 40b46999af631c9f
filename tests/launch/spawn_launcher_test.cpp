// The launcher against real child processes: the toy trial program misbehaves on request.
#include "launch/spawn_launcher.hpp"

#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "support/temp_dir.hpp"

namespace cleansweep {
namespace {

using testing::ReadFile;
using testing::TempDir;

class SpawnLauncherTest : public ::testing::Test {
 protected:
  void SetUp() override { ::signal(SIGPIPE, SIG_IGN); }  // as the worker does

  LaunchSpec Spec(const std::string& mode, const std::string& params = "{\"x\": 0.3, \"n\": 4}") {
    LaunchSpec spec;
    spec.argv = {TOY_TRIAL};
    spec.trial_dir = dir_.File("trial");
    spec.env = {{"CLEANSWEEP_PARAMS", params}, {"CLEANSWEEP_TRIAL", "7"},      {"CLEANSWEEP_TRIAL_DIR", spec.trial_dir},
                {"CLEANSWEEP_REPORT_FD", "3"}, {"CLEANSWEEP_CONTROL_FD", "4"}, {"TOY_MODE", mode}};
    spec.kill_grace = Millis(500);
    return spec;
  }

  // Runs the trial to its end and returns the outcome; `steps` gets its intermediate reports.
  TrialOutcome RunToEnd(const LaunchSpec& spec, std::vector<StepReport>* steps = nullptr) {
    Result<std::unique_ptr<TrialProcess>> trial = launcher_.Start(spec);
    EXPECT_TRUE(trial.ok()) << trial.status().message();
    std::vector<StepReport> local;
    while (!(*trial)->Finished()) (*trial)->Poll(Millis(1000), steps ? steps : &local);
    return (*trial)->Outcome();
  }

  TempDir dir_;
  SpawnLauncher launcher_;
};

TEST_F(SpawnLauncherTest, CompleteTrialReportsEverything) {
  std::vector<StepReport> steps;
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

TEST_F(SpawnLauncherTest, NonZeroExitFails) {
  const TrialOutcome o = RunToEnd(Spec("fail"));
  EXPECT_EQ(o.state, TrialState::kFail);
  EXPECT_EQ(o.exit_code, 3);
  EXPECT_EQ(o.reason, "exited with status 3");
  EXPECT_NE(o.output_tail.find("toy: failing on purpose"), std::string::npos);  // stderr is captured too
}

TEST_F(SpawnLauncherTest, SignalIsACrash) {
  const TrialOutcome o = RunToEnd(Spec("crash"));
  EXPECT_EQ(o.state, TrialState::kCrash);
  EXPECT_EQ(o.signal, SIGSEGV);
  EXPECT_EQ(o.exit_code, -1);
  EXPECT_NE(o.reason.find("killed by signal 11"), std::string::npos) << o.reason;
}

TEST_F(SpawnLauncherTest, NoFinalValueFails) {
  const TrialOutcome o = RunToEnd(Spec("noreport"));
  EXPECT_EQ(o.state, TrialState::kFail);
  EXPECT_EQ(o.reason, "exited 0 without reporting a final value");
}

TEST_F(SpawnLauncherTest, OutOfMemoryReportIsClassified) {
  const TrialOutcome o = RunToEnd(Spec("oom"));
  EXPECT_EQ(o.state, TrialState::kOomGpu);
  EXPECT_EQ(o.exit_code, 75);
  EXPECT_NE(o.reason.find("CUDA out of memory"), std::string::npos);
}

TEST_F(SpawnLauncherTest, MalformedReportStopsTheTrialAtOnce) {
  const auto started = std::chrono::steady_clock::now();
  const TrialOutcome o = RunToEnd(Spec("malformed"));
  EXPECT_EQ(o.state, TrialState::kFail);
  EXPECT_NE(o.reason.find("protocol error: report line 4: not a JSON object: this is not json"), std::string::npos)
      << o.reason;
  EXPECT_EQ(o.signal, SIGTERM);  // it would have slept 30 s
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(25));
}

TEST_F(SpawnLauncherTest, TimeoutKillsTheWholeProcessGroup) {
  LaunchSpec spec = Spec("grandchild");
  spec.timeout = Millis(300);
  Result<std::unique_ptr<TrialProcess>> trial = launcher_.Start(spec);
  ASSERT_TRUE(trial.ok());
  std::vector<StepReport> steps;
  while (!(*trial)->Finished()) (*trial)->Poll(Millis(1000), &steps);
  const TrialOutcome& o = (*trial)->Outcome();
  EXPECT_EQ(o.state, TrialState::kTimeout);
  EXPECT_EQ(o.reason, "ran past its timeout of 300ms");
  EXPECT_EQ(o.signal, SIGTERM);
  // The grandchild (sleep 600) shared the group: nothing of the group may be left.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::string ps = [] {
    std::string out;
    FILE* p = popen("ps -eo args= | grep -c '^sleep 600$'", "r");
    char buf[64] = {};
    if (p && fgets(buf, sizeof buf, p)) out = buf;
    if (p) pclose(p);
    return out;
  }();
  EXPECT_EQ(ps, "0\n") << "a grandchild survived the timeout";
}

TEST_F(SpawnLauncherTest, TrialIgnoringSigtermIsKilledAfterTheGrace) {
  LaunchSpec spec = Spec("ignoreterm");
  spec.timeout = Millis(200);
  spec.kill_grace = Millis(300);
  const TrialOutcome o = RunToEnd(spec);
  EXPECT_EQ(o.state, TrialState::kTimeout);
  EXPECT_EQ(o.signal, SIGKILL);
}

TEST_F(SpawnLauncherTest, StopInterruptsARunningTrial) {
  Result<std::unique_ptr<TrialProcess>> trial = launcher_.Start(Spec("hang"));
  ASSERT_TRUE(trial.ok());
  std::vector<StepReport> steps;
  while (steps.size() < 3) (*trial)->Poll(Millis(1000), &steps);  // it is running for sure
  (*trial)->Stop(TrialState::kInterrupted, "interrupted: test");
  while (!(*trial)->Finished()) (*trial)->Poll(Millis(1000), &steps);
  EXPECT_EQ((*trial)->Outcome().state, TrialState::kInterrupted);
  EXPECT_EQ((*trial)->Outcome().reason, "interrupted: test");
}

TEST_F(SpawnLauncherTest, OutputFloodIsCappedAndDoesNotBlock) {
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

TEST_F(SpawnLauncherTest, MissingProgramFailsWithTheReason) {
  LaunchSpec spec = Spec("ok");
  spec.argv = {dir_.File("does-not-exist")};
  const TrialOutcome o = RunToEnd(spec);
  EXPECT_EQ(o.state, TrialState::kFail);
  EXPECT_NE(o.reason.find("No such file or directory"), std::string::npos) << o.reason;
}

TEST_F(SpawnLauncherTest, ParametersReachTheTrial) {
  const TrialOutcome o = RunToEnd(Spec("ok", R"({"x": 0.5, "n": 6, "opt": "b"})"));
  ASSERT_TRUE(o.value);
  EXPECT_DOUBLE_EQ(*o.value, 1.0 - 0.04 - 0.04 + 0.05);
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
