// The scheduling loop with real workers on threads, an in-process transport, a fake launcher and a
// memory store: no mpirun, no HDF5 file, no processes.
#include "coordinator/coordinator.hpp"

#include <atomic>
#include <cstdio>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "support/fake_launcher.hpp"
#include "transport/in_process_transport.hpp"
#include "worker/worker.hpp"

namespace cleansweep {
namespace {

using testing::FakeLauncher;
using testing::FakeObjective;

StudyConfig Config(const std::string& study, const std::string& sampler, const std::string& command = "[sh]") {
  Result<StudyConfig> config =
      LoadConfigText("study: " + study + "\nsampler: " + sampler + "\ntrial: {command: " + command +
                         "}\nspace:\n  x: {type: float, low: 0.0, high: 1.0}\n"
                         "  n: {type: int, low: 1, high: 4}\n",
                     "c.yaml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  return *config;
}

// Hands the coordinator a store whose rows stay readable after the coordinator is gone.
class BorrowedStore : public StudyStore {
 public:
  explicit BorrowedStore(MemoryStudyStore* target) : target_(target) {}
  Status PutTrial(const TrialRecord& r) override { return target_->PutTrial(r); }
  Status AppendIntermediate(const IntermediateValue& v) override { return target_->AppendIntermediate(v); }

 private:
  MemoryStudyStore* target_;
};

// A clock that moves one second every time it is read.
class SteppingClock : public Clock {
 public:
  double Now() const override { return static_cast<double>(++reads_); }

 private:
  mutable std::atomic<long> reads_{0};
};

class Sweep {
 public:
  Sweep(const StudyConfig& config, int workers, bool hang = false)
      : config_(config), hub_(workers + 1), coordinator_transport_(&hub_, 0), launcher_(hang) {
    for (int rank = 1; rank <= workers; ++rank) {
      transports_.push_back(std::make_unique<InProcessTransport>(&hub_, rank));
      WorkerIdentity id;
      id.host = "host" + std::to_string(rank);
      id.local_index = rank - 1;
      id.visible_gpus = {"0", "1"};
      workers_.push_back(std::make_unique<Worker>(transports_.back().get(), &launcher_, id));
    }
  }

  Result<RunSummary> Run(const Clock& clock, bool* store_opened = nullptr) {
    std::vector<std::thread> threads;
    std::vector<Status> worker_status(workers_.size());
    for (size_t i = 0; i < workers_.size(); ++i) {
      threads.emplace_back([&, i] { worker_status[i] = workers_[i]->Run(); });
    }
    Result<std::unique_ptr<Sampler>> sampler = MakeSampler(config_);
    EXPECT_TRUE(sampler.ok());
    std::FILE* sink = std::tmpfile();
    Progress progress(sink, false, config_);
    Coordinator coordinator(config_, &coordinator_transport_, sampler->get(), &clock, &progress,
                            CoordinatorTiming{Millis(20), Millis(5000)});
    Result<RunSummary> summary = coordinator.Run(
        [&]() -> Result<std::unique_ptr<StudyStore>> {
          if (store_opened) *store_opened = true;
          return std::unique_ptr<StudyStore>(std::make_unique<BorrowedStore>(&store_));
        },
        "/tmp/unused.trials");
    for (auto& t : threads) t.join();  // every worker must have been told to stop
    for (const Status& s : worker_status) EXPECT_TRUE(s.ok()) << s.message();
    std::fclose(sink);
    return summary;
  }

  MemoryStudyStore* store() { return &store_; }
  FakeLauncher& launcher() { return launcher_; }

 private:
  StudyConfig config_;
  InProcessHub hub_;
  InProcessTransport coordinator_transport_;
  FakeLauncher launcher_;
  std::vector<std::unique_ptr<InProcessTransport>> transports_;
  std::vector<std::unique_ptr<Worker>> workers_;
  MemoryStudyStore store_;
};

TEST(Coordinator, RunsEveryTrialOnceAndRecordsEverything) {
  Sweep sweep(Config("{name: c, n_trials: 40, direction: maximize}", "{kind: random, seed: 3}"), 3);
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->finished, 40);
  EXPECT_EQ(summary->complete, 40);
  const auto& trials = sweep.store()->trials;
  ASSERT_EQ(trials.size(), 40u);
  std::set<std::int64_t> numbers;
  std::set<int> ranks;
  double best = -1;
  for (const TrialRecord& r : trials) {
    numbers.insert(r.number);
    ranks.insert(r.worker);
    EXPECT_EQ(r.state, TrialState::kComplete);
    EXPECT_DOUBLE_EQ(*r.value, FakeObjective(r.params));  // the value belongs to these parameters
    EXPECT_EQ(r.host, "host" + std::to_string(r.worker));
    EXPECT_EQ(r.gpu, r.worker == 2 ? "1" : "0");  // round robin over the node's two GPUs
    best = std::max(best, *r.value);
  }
  EXPECT_EQ(numbers.size(), 40u);
  EXPECT_EQ(*numbers.begin(), 0);
  EXPECT_EQ(*numbers.rbegin(), 39);
  EXPECT_EQ(ranks, (std::set<int>{1, 2, 3}));  // every worker got work
  EXPECT_EQ(*summary->best->value, best);
  EXPECT_GE(sweep.store()->intermediate.size(), 40u);  // reports travel to the store as they come
}

TEST(Coordinator, StopsWhenTheGridIsUsedUp) {
  Result<StudyConfig> config = LoadConfigText(
      "study: {name: g, n_trials: 100}\nsampler: {kind: grid}\ntrial: {command: [sh]}\n"
      "space:\n  n: {type: int, low: 1, high: 4}\n  x: {type: float, low: 0.0, high: 1.0, grid: [0.5]}\n",
      "g.yaml");
  ASSERT_TRUE(config.ok());
  Sweep sweep(*config, 2);
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->finished, 4);
  std::set<double> values;
  for (const TrialRecord& r : sweep.store()->trials) values.insert(*r.value);
  EXPECT_EQ(values, (std::set<double>{10.5, 20.5, 30.5, 40.5}));
}

TEST(Coordinator, TimeBudgetInterruptsRunningTrialsAndStops) {
  Sweep sweep(Config("{name: c, n_trials: 1000, time_budget: 30s}", "{kind: random}"), 2, /*hang=*/true);
  const SteppingClock clock;  // the budget passes after ~30 reads of the clock
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_TRUE(summary->budget_reached);
  const auto& trials = sweep.store()->trials;
  ASSERT_EQ(trials.size(), 2u);  // the two that were running, and nothing after them
  for (const TrialRecord& r : trials) {
    EXPECT_EQ(r.state, TrialState::kInterrupted);
    EXPECT_EQ(r.reason, "interrupted: the study's time budget was reached");
  }
  EXPECT_EQ(sweep.launcher().started, 2);
}

TEST(Coordinator, WorkerThatCannotSetUpStopsTheRunBeforeAnyFileExists) {
  Sweep sweep(Config("{name: c}", "{kind: random}", "[no-such-trial-program]"), 2);
  const SystemClock clock;
  bool opened = false;
  Result<RunSummary> summary = sweep.Run(clock, &opened);
  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.status().code(), Status::Code::kInvalidInput);
  // Whichever worker answers first is named, with its host.
  const std::string message = summary.status().message();
  EXPECT_TRUE(message.rfind("worker rank 1 on host1: ", 0) == 0 || message.rfind("worker rank 2 on host2: ", 0) == 0)
      << message;
  EXPECT_NE(message.find("trial.command[0]: program 'no-such-trial-program' not found"), std::string::npos) << message;
  EXPECT_FALSE(opened);
}

TEST(Coordinator, EnqueuedConfigurationsRunFirstAndAreMarked) {
  Result<StudyConfig> config = LoadConfigText(
      "study: {name: e, n_trials: 6}\nsampler: {kind: tpe, seed: 2}\ntrial: {command: [sh]}\n"
      "space:\n  x: {type: float, low: 0.0, high: 1.0}\n  n: {type: int, low: 1, high: 4}\n"
      "enqueue:\n  - {x: 0.5, n: 2}\n  - {n: 3}\n",
      "e.yaml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  Sweep sweep(*config, 1);  // one worker: trials run in order
  const SystemClock clock;
  ASSERT_TRUE(sweep.Run(clock).ok());
  const auto& trials = sweep.store()->trials;
  ASSERT_EQ(trials.size(), 6u);
  EXPECT_TRUE(trials[0].enqueued);
  EXPECT_EQ(trials[0].params, (ParamSet{{"x", 0.5}, {"n", std::int64_t{2}}}));
  EXPECT_TRUE(trials[1].enqueued);
  EXPECT_EQ(trials[1].params.at("n"), ParamValue(std::int64_t{3}));  // x completed by the sampler
  EXPECT_TRUE(trials[1].params.count("x"));
  for (size_t i = 2; i < 6; ++i) EXPECT_FALSE(trials[i].enqueued);
  for (const TrialRecord& r : trials) EXPECT_GE(r.sampler_ms, 0.0);
}

TEST(Coordinator, TrialsGetTheProtocolEnvironment) {
  Sweep sweep(Config("{name: c, n_trials: 1}", "{kind: random}"), 1);
  const SystemClock clock;
  ASSERT_TRUE(sweep.Run(clock).ok());
  const auto env = sweep.launcher().last_env();
  EXPECT_EQ(env.at("CLEANSWEEP_TRIAL"), "0");
  EXPECT_EQ(env.at("CLEANSWEEP_TRIAL_DIR"), "/tmp/unused.trials/0");
  EXPECT_EQ(env.at("CLEANSWEEP_REPORT_FD"), "3");
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "0");
  EXPECT_TRUE(nlohmann::json::parse(env.at("CLEANSWEEP_PARAMS")).contains("x"));
}

}  // namespace
}  // namespace cleansweep
