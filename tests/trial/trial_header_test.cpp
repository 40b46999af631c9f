// The C++ client header's prune check against a control pipe, as a worker hands it over.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include <cleansweep/trial.hpp>

namespace cleansweep {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

class TrialHeaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(::pipe(report_), 0);
    ASSERT_EQ(::pipe(control_), 0);
    ::fcntl(control_[0], F_SETFL, O_NONBLOCK);  // as the worker hands it over
    ::setenv("CLEANSWEEP_REPORT_FD", std::to_string(report_[1]).c_str(), 1);
    ::setenv("CLEANSWEEP_CONTROL_FD", std::to_string(control_[0]).c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("CLEANSWEEP_REPORT_FD");
    ::unsetenv("CLEANSWEEP_CONTROL_FD");
    for (int fd : {report_[0], report_[1], control_[0], control_[1]}) {
      if (fd >= 0) ::close(fd);
    }
  }
  void Notify() { ASSERT_EQ(::write(control_[1], "prune\n", 6), 6); }
  static double Since(steady_clock::time_point t) {
    return std::chrono::duration<double>(steady_clock::now() - t).count();
  }

  int report_[2] = {-1, -1};
  int control_[2] = {-1, -1};
};

TEST_F(TrialHeaderTest, ShouldPruneNeverBlocksByDefaultAndSeesANotice) {
  Trial trial = Trial::FromEnvironment();
  EXPECT_FALSE(trial.ShouldPrune());
  Notify();
  EXPECT_TRUE(trial.ShouldPrune());
  EXPECT_TRUE(trial.ShouldPrune());  // and stays pruned
}

TEST_F(TrialHeaderTest, ShouldPruneWaitsOnlyAsLongAsAskedAndReturnsWhenTheNoticeComes) {
  Trial trial = Trial::FromEnvironment();
  auto started = steady_clock::now();
  EXPECT_FALSE(trial.ShouldPrune(milliseconds(200)));
  EXPECT_GE(Since(started), 0.19);
  std::thread sweep([this] {
    std::this_thread::sleep_for(milliseconds(100));
    Notify();
  });
  started = steady_clock::now();
  EXPECT_TRUE(trial.ShouldPrune(milliseconds(30'000)));  // the notice ends the wait, not the 30 s
  EXPECT_LT(Since(started), 25.0);
  sweep.join();
}

TEST_F(TrialHeaderTest, ShouldPruneStopsWaitingWhenTheSweepClosesThePipe) {
  Trial trial = Trial::FromEnvironment();
  ::close(control_[1]);
  control_[1] = -1;
  const auto started = steady_clock::now();
  EXPECT_FALSE(trial.ShouldPrune(milliseconds(30'000)));
  EXPECT_LT(Since(started), 25.0);
}

TEST_F(TrialHeaderTest, ShouldPruneNeverWaitsInASweepWithoutAPruner) {
  ::setenv("CLEANSWEEP_PRUNING", "0", 1);
  Trial trial = Trial::FromEnvironment();
  ::unsetenv("CLEANSWEEP_PRUNING");
  const auto started = steady_clock::now();
  EXPECT_FALSE(trial.ShouldPrune(milliseconds(30'000)));
  EXPECT_LT(Since(started), 25.0);
  Notify();  // a notice already there is still seen
  EXPECT_TRUE(trial.ShouldPrune(milliseconds(30'000)));
}

// Define-by-run: a request on the report pipe, the worker's answer on the control pipe (a
// prune notice that comes first is kept), the value asked again without a round trip, a refusal
// thrown with the sweep's reason.
TEST_F(TrialHeaderTest, SuggestAsksOnTheReportPipeAndReadsTheAnswerLine) {
  Trial trial = Trial::FromEnvironment();
  const std::string answers =
      "prune\n{\"name\":\"lr\",\"value\":0.00125}\n{\"name\":\"opt\",\"value\":\"adam\"}\n"
      "{\"name\":\"n\",\"value\":6}\n{\"error\":\"the grid refuses 'x'\",\"name\":\"x\"}\n";
  ASSERT_EQ(::write(control_[1], answers.data(), answers.size()), static_cast<ssize_t>(answers.size()));
  EXPECT_EQ(trial.SuggestFloat("lr", 1e-5, 0.1, std::nullopt, true), 0.00125);
  EXPECT_EQ(trial.SuggestFloat("lr", 1e-5, 0.1, std::nullopt, true), 0.00125);  // no second request
  EXPECT_EQ(trial.SuggestCategorical("opt", std::vector<std::string>{"adam", "sgd"}), "adam");
  EXPECT_EQ(trial.SuggestInt("n", 2, 8, 2), 6);
  EXPECT_THROW(trial.SuggestFloat("x", 0, 1), std::runtime_error);
  EXPECT_TRUE(trial.ShouldPrune());  // the notice before the answers
  char buf[1024];
  const ssize_t n = ::read(report_[0], buf, sizeof buf);
  ASSERT_GT(n, 0);
  const std::string sent(buf, static_cast<size_t>(n));
  EXPECT_EQ(
      sent,
      "{\"suggest\": {\"name\": \"lr\", \"type\": \"float\", \"low\": 1e-05, \"high\": 0.1, \"log\": true}}\n"
      "{\"suggest\": {\"name\": \"opt\", \"type\": \"categorical\", \"choices\": [\"adam\", \"sgd\"]}}\n"
      "{\"suggest\": {\"name\": \"n\", \"type\": \"int\", \"low\": 2, \"high\": 8, \"step\": 2, \"log\": false}}\n"
      "{\"suggest\": {\"name\": \"x\", \"type\": \"float\", \"low\": 0, \"high\": 1, \"log\": false}}\n");
}

TEST(TrialHeaderStandalone, SuggestOutsideASweepGivesTheMiddleOrTheGivenValue) {
  ::setenv("CLEANSWEEP_PARAMS", "{\"lr\": 0.5}", 1);
  Trial trial = Trial::FromEnvironment();
  ::unsetenv("CLEANSWEEP_PARAMS");
  EXPECT_EQ(trial.SuggestFloat("lr", 0, 1), 0.5);
  EXPECT_EQ(trial.SuggestFloat("x", 1, 100, std::nullopt, true), 10);
  EXPECT_EQ(trial.SuggestInt("n", 1, 9), 5);
  EXPECT_EQ(trial.SuggestCategorical("opt", std::vector<std::string>{"adam", "sgd"}), "adam");
}

}  // namespace
}  // namespace cleansweep
