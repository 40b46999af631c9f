// The scheduling loop with real workers on threads, an in-process transport, a fake launcher and a
// memory store: no mpirun, no HDF5 file, no processes.
#include "coordinator/coordinator.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "support/borrowed_store.hpp"
#include "support/fake_launcher.hpp"
#include "support/faults.hpp"
#include "support/manual_clock.hpp"
#include "support/memory_study_store.hpp"
#include "support/temp_dir.hpp"
#include "transport/in_process_transport.hpp"
#include "util/number_format.hpp"
#include "worker/worker.hpp"

namespace cleansweep {
namespace {

using testing::FakeLauncher;
using testing::FakeObjective;
using testing::ManualClock;
using testing::MemoryStudyStore;

StudyConfig Config(const std::string& study, const std::string& sampler, const std::string& command = "[sh]") {
  Result<StudyConfig> config =
      LoadConfigText("study: " + study + "\nsampler: " + sampler + "\ntrial: {command: " + command +
                         "}\nspace:\n  x: {type: float, low: 0.0, high: 1.0}\n"
                         "  n: {type: int, low: 1, high: 4}\n",
                     "c.yaml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  return *config;
}

using testing::BorrowedStore;

// A clock that moves one second every time it is read.
class SteppingClock : public Clock {
 public:
  double Now() const override { return static_cast<double>(++reads_); }

 private:
  mutable std::atomic<long> reads_{0};
};

class Sweep {
 public:
  // `per_node` > 0: the workers are on nodes of that many ("node0", "node1", ...), each with as
  // many GPUs; otherwise each on a host of its own with GPUs 0 and 1.
  Sweep(const StudyConfig& config, int workers, bool hang = false, int per_node = 0)
      : config_(config), hub_(workers + 1), coordinator_transport_(&hub_, 0), launcher_(hang) {
    for (int rank = 1; rank <= workers; ++rank) {
      transports_.push_back(std::make_unique<InProcessTransport>(&hub_, rank));
      WorkerIdentity id;
      id.host = "host" + std::to_string(rank);
      id.local_index = rank - 1;
      id.visible_gpus = {{"0", "1"}, "test"};
      if (per_node > 0) {
        id.host = "node" + std::to_string((rank - 1) / per_node);
        id.local_index = (rank - 1) % per_node;
        id.local_count = per_node;
        id.visible_gpus.devices.clear();
        for (int g = 0; g < per_node; ++g) id.visible_gpus.devices.push_back(std::to_string(g));
      }
      id.address = id.host + ".example";
      workers_.push_back(std::make_unique<Worker>(transports_.back().get(), &launcher_, id));
    }
  }

  // Called on the coordinator before it runs (to resume it, or to give it a stop poll).
  std::function<void(Coordinator&)> prepare;
  std::function<int()> worker_signals;   // every worker's signal poll (stop signals it got), if set
  Sampler* sampler_override = nullptr;   // instead of the config's
  StudyStore* store_override = nullptr;  // instead of the memory store (a fault-injecting one)
  int fail_send = 0;                     // the coordinator's Nth send fails (0: none)
  CoordinatorTiming timing{Millis(20), Millis(5000)};
  // Wraps the coordinator's transport (to see or steer how long it waits), or null.
  std::function<std::unique_ptr<Transport>(Transport*)> wrap_transport;
  std::string trials_root = "/tmp/unused.trials";  // where trial folders go (only fake trials that write use it)
  std::string progress_text;                       // what the coordinator printed, after Run
  bool workers_settled = false;                    // the coordinator's WorkersSettled(), after Run

  Result<RunSummary> Run(const Clock& clock, bool* store_opened = nullptr) {
    std::vector<std::thread> threads;
    std::vector<Status> worker_status(workers_.size());
    for (size_t i = 0; i < workers_.size(); ++i) {
      if (worker_signals) workers_[i]->SetSignalPoll(worker_signals);
      threads.emplace_back([&, i] { worker_status[i] = workers_[i]->Run(); });
    }
    Result<std::unique_ptr<Sampler>> sampler = MakeSampler(config_);
    EXPECT_TRUE(sampler.ok());
    std::FILE* sink = std::tmpfile();
    Progress progress(sink, false, config_);
    testing::FaultyTransport faulty(&coordinator_transport_, fail_send);
    std::unique_ptr<Transport> wrapped = wrap_transport ? wrap_transport(&faulty) : nullptr;
    Coordinator coordinator(config_, wrapped ? wrapped.get() : &faulty,
                            sampler_override ? sampler_override : sampler->get(), &clock, &progress, timing);
    if (prepare) prepare(coordinator);
    Result<RunSummary> summary = coordinator.Run(
        [&]() -> Result<std::unique_ptr<StudyStore>> {
          if (store_opened) *store_opened = true;
          if (store_override) return std::unique_ptr<StudyStore>(std::make_unique<BorrowedStore>(store_override));
          return std::unique_ptr<StudyStore>(std::make_unique<BorrowedStore>(&store_));
        },
        trials_root);
    workers_settled = coordinator.WorkersSettled();
    for (auto& t : threads) t.join();  // every worker must have been told to stop
    for (const Status& s : worker_status) EXPECT_TRUE(s.ok()) << s.message();
    std::rewind(sink);
    for (int c; (c = std::fgetc(sink)) != EOF;) progress_text += static_cast<char>(c);
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
  const auto& trials = sweep.store()->trials();
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
  EXPECT_GE(sweep.store()->intermediate().size(), 40u);  // reports travel to the store as they come
}

// Issue 19's idle gap: every result says when its worker became free for it (the end of that
// worker's previous trial), so the gap needs no guessing across workers or runs.
TEST(Coordinator, EachTrialSaysWhenItsWorkerBecameFreeForIt) {
  Sweep sweep(Config("{name: c, n_trials: 30, direction: maximize}", "{kind: random, seed: 3}"), 3);
  const SystemClock clock;
  ASSERT_TRUE(sweep.Run(clock).ok());
  std::map<int, std::vector<TrialRecord>> by_worker;  // in the order each worker ran them
  for (const TrialRecord& r : sweep.store()->trials()) by_worker[r.worker].push_back(r);
  ASSERT_EQ(by_worker.size(), 3u);
  for (auto& [worker, trials] : by_worker) {
    std::sort(trials.begin(), trials.end(), [](const auto& a, const auto& b) { return a.number < b.number; });
    EXPECT_TRUE(std::isnan(trials[0].worker_free_time)) << "worker " << worker << "'s first trial";
    EXPECT_FALSE(trials[0].idle_gap_ms()) << "no gap before a worker's first trial";
    for (size_t i = 1; i < trials.size(); ++i) {
      EXPECT_EQ(trials[i].worker_free_time, trials[i - 1].end_time)
          << "worker " << worker << ", trial " << trials[i].number << " after " << trials[i - 1].number;
      ASSERT_TRUE(trials[i].idle_gap_ms());
      EXPECT_DOUBLE_EQ(*trials[i].idle_gap_ms(), (trials[i].start_time - trials[i - 1].end_time) * 1e3);
    }
  }
}

// A trial's words reach its progress line (an OOM message, a protocol error quoting its report):
// escape sequences and line breaks in them are shown, not obeyed, so a trial can neither clear
// the user's screen nor print a line that looks like ours.
TEST(Progress, ATrialsWordsCannotDriveTheTerminal) {
  Result<StudyConfig> config = LoadConfigText(
      "study: {name: p}\ntrial: {command: [sh]}\nspace:\n  x: {type: float, low: 0.0, high: 1.0}\n", "p.yaml");
  ASSERT_TRUE(config.ok());
  TrialRecord r;
  r.number = 3;
  r.state = TrialState::kOomGpu;
  r.host = "node1";
  r.params = {{"x", 0.5}};
  r.reason = "out of GPU memory: \x1b[2J\x1b]0;owned\x07\nfake: trial 99 COMPLETE value=0.99";
  const std::string line = Progress::TrialLine(r, *config);
  EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_NE(line.find(": out of GPU memory: \\x1b[2J\\x1b]0;owned\\x07\\nfake: trial 99 COMPLETE value=0.99"),
            std::string::npos)
      << line;
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
  for (const TrialRecord& r : sweep.store()->trials()) values.insert(*r.value);
  EXPECT_EQ(values, (std::set<double>{10.5, 20.5, 30.5, 40.5}));
  // Issue 36: short of n_trials, it says why, in its last lines and in the file (for `show`).
  const std::string why = "sampler grid has 4 configurations, fewer than study.n_trials (100): each ran once";
  EXPECT_EQ(summary->stopped_early, why);
  EXPECT_EQ(sweep.store()->stop_reason(), why);
  EXPECT_NE(sweep.progress_text.find("ended before study.n_trials: " + why), std::string::npos) << sweep.progress_text;
}

TEST(Coordinator, TimeBudgetInterruptsRunningTrialsAndStops) {
  Sweep sweep(Config("{name: c, n_trials: 1000, time_budget: 30s}", "{kind: random}"), 2, /*hang=*/true);
  const SteppingClock clock;  // the budget passes after ~30 reads of the clock
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_TRUE(summary->budget_reached);
  const auto& trials = sweep.store()->trials();
  ASSERT_EQ(trials.size(), 2u);  // the two that were running, and nothing after them
  for (const TrialRecord& r : trials) {
    EXPECT_EQ(r.state, TrialState::kInterrupted);
    EXPECT_EQ(r.reason, "interrupted: the study's time budget was reached");
  }
  EXPECT_EQ(sweep.launcher().started, 2);
}

// Once `*started` (the study's store is open: the set-up is over), the coordinator's waits pass in
// simulated time: each Receive moves `clock` on by the whole wait asked for, whatever arrives (the
// fake trials report at every poll), really waits a few milliseconds at most, and is recorded
// with the time it began.
class SimulatedTimeTransport : public Transport {
 public:
  using Waits = std::vector<std::pair<double, Millis>>;  // (simulated time, wait asked for)
  SimulatedTimeTransport(Transport* inner, ManualClock* clock, Waits* waits, const bool* started)
      : inner_(inner), clock_(clock), waits_(waits), started_(started) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  Status Send(int dest, const Message& message) override { return inner_->Send(dest, message); }
  Result<std::optional<Envelope>> Receive(Millis max_wait) override {
    if (!*started_) return inner_->Receive(max_wait);
    waits_->emplace_back(clock_->Now(), max_wait);
    Result<std::optional<Envelope>> got = inner_->Receive(std::min(max_wait, Millis(5)));
    clock_->Advance(max_wait);
    return got;
  }

 private:
  Transport* inner_;
  ManualClock* clock_;
  Waits* waits_;
  const bool* started_;
};

TEST(Coordinator, TimeBudgetEndsRunningTrialsAtTheBudgetNotAtTheNextTick) {
  // Ticks a minute apart and a 10 s budget: the loop must wake at the budget, not a tick later.
  Sweep sweep(Config("{name: c, n_trials: 1000, time_budget: 10s}", "{kind: random}"), 2, /*hang=*/true);
  sweep.timing = CoordinatorTiming{Millis(60'000), Millis(5000)};
  ManualClock clock;
  SimulatedTimeTransport::Waits waits;
  bool started = false;
  sweep.wrap_transport = [&](Transport* inner) {
    return std::unique_ptr<Transport>(std::make_unique<SimulatedTimeTransport>(inner, &clock, &waits, &started));
  };
  const double start = clock.Now();
  Result<RunSummary> summary = sweep.Run(clock, &started);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_TRUE(summary->budget_reached);
  EXPECT_FALSE(summary->interrupted);  // a budget is an end, not an interruption
  bool waited_to_budget = false;
  for (const auto& [at, wait] : waits) {
    if (at >= start + 10) break;  // the budget was reached: stopping trials may take ticks
    EXPECT_LE(at + static_cast<double>(wait.count()) / 1e3, start + 10 + 1e-3)
        << "a wait from t=" << at - start << " s for " << wait.count() << " ms overshoots the 10 s budget";
    waited_to_budget |= std::abs(at + static_cast<double>(wait.count()) / 1e3 - (start + 10)) < 1e-3;
  }
  EXPECT_TRUE(waited_to_budget);
  ASSERT_EQ(sweep.store()->trials().size(), 2u);
  for (const TrialRecord& r : sweep.store()->trials()) EXPECT_EQ(r.state, TrialState::kInterrupted);
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

// A sampler that fits a model per ask says it asks in batches; it records how it was asked.
class BatchRecorder : public Sampler {
 public:
  std::optional<ParamSet> Ask(std::int64_t number, const TrialHistory&) override {
    singles.push_back(number);
    return Proposal(number);
  }
  bool AsksInBatches() const override { return true; }
  std::vector<ParamSet> AskBatch(const std::vector<std::int64_t>& numbers, const TrialHistory&) override {
    batches.push_back(numbers);
    std::vector<ParamSet> out;
    for (std::int64_t n : numbers) out.push_back(Proposal(n));
    return out;
  }
  static ParamSet Proposal(std::int64_t n) {
    return {{"x", static_cast<double>(n) / 100.0}, {"n", std::int64_t{1 + n % 4}}};
  }
  std::vector<std::int64_t> singles;
  std::vector<std::vector<std::int64_t>> batches;
};

// Issue 40: rank 0 never goes silent. A sampler that takes 700 ms for trial 3 (a pruner that
// loops, a flush that hangs would do the same) holds one turn of the loop; with the watchdog at
// 100 ms, rank 0 says what the turn is doing at 100, 200 and 400 ms into it, and when it ends.
// A sweep whose turns are all short says nothing.
class SlowSampler : public Sampler {
 public:
  std::optional<ParamSet> Ask(std::int64_t number, const TrialHistory&) override {
    if (number == 3) std::this_thread::sleep_for(std::chrono::milliseconds(700));
    return BatchRecorder::Proposal(number);
  }
};

TEST(Coordinator, ATurnOfTheLoopThatTakesLongSaysWhatItIsDoing) {
  Sweep sweep(Config("{name: w, n_trials: 6}", "{kind: random, seed: 1}"), 2);
  SlowSampler slow;
  sweep.sampler_override = &slow;
  sweep.timing.watchdog = Millis(100);
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->finished, 6);
  const std::string& text = sweep.progress_text;
  const std::regex still(
      "rank 0 is still in one turn of its loop after [0-9.]+ s, choosing trial parameters \\(sampler random\\) and "
      "handing them out: no trial is handed out or recorded until it ends\n");
  const auto lines = std::distance(std::sregex_iterator(text.begin(), text.end(), still), std::sregex_iterator());
  // Due at 100, 200 and 400 ms into the 700 ms turn (the watchdog wakes up to a quarter late):
  // at least two, whatever the load on the machine; 800 ms only where the sampler's thread was late.
  EXPECT_GE(lines, 2) << text;
  EXPECT_LE(lines, 4) << text;
  EXPECT_TRUE(std::regex_search(text, std::regex("rank 0 goes on: that turn of its loop took [0-9]+\\.[0-9] s "
                                                 "\\(last seen choosing trial parameters \\(sampler random\\)")))
      << text;
  Sweep quick(Config("{name: w, n_trials: 6}", "{kind: random, seed: 1}"), 2);
  quick.timing.watchdog = Millis(5000);
  ASSERT_TRUE(quick.Run(clock).ok());
  EXPECT_EQ(quick.progress_text.find("rank 0 is still"), std::string::npos) << quick.progress_text;
}

TEST(Coordinator, WorkersFreeInTheSameTurnGetOneBatchAskOfTheSampler) {
  Sweep sweep(Config("{name: b, n_trials: 10}", "{kind: tpe, seed: 1}"), 4);
  BatchRecorder recorder;
  sweep.sampler_override = &recorder;
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  ASSERT_FALSE(recorder.batches.empty());
  EXPECT_EQ(recorder.batches[0], (std::vector<std::int64_t>{0, 1, 2, 3})) << "the first turn finds all 4 free";
  std::set<std::int64_t> asked(recorder.singles.begin(), recorder.singles.end());
  for (const auto& b : recorder.batches) asked.insert(b.begin(), b.end());
  EXPECT_EQ(asked.size(), 10u) << "every trial asked for exactly once";
  EXPECT_EQ(
      recorder.singles.size() +
          [&] {
            size_t n = 0;
            for (const auto& b : recorder.batches) n += b.size();
            return n;
          }(),
      10u);
  const auto& trials = sweep.store()->trials();
  ASSERT_EQ(trials.size(), 10u);
  for (const TrialRecord& r : trials) {
    EXPECT_EQ(r.params, BatchRecorder::Proposal(r.number)) << "trial " << r.number << " got another's proposal";
    EXPECT_GE(r.sampler_ms, 0.0);
  }
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
  const auto& trials = sweep.store()->trials();
  ASSERT_EQ(trials.size(), 6u);
  EXPECT_TRUE(trials[0].enqueued);
  EXPECT_EQ(trials[0].params, (ParamSet{{"x", 0.5}, {"n", std::int64_t{2}}}));
  EXPECT_TRUE(trials[1].enqueued);
  EXPECT_EQ(trials[1].params.at("n"), ParamValue(std::int64_t{3}));  // x completed by the sampler
  EXPECT_TRUE(trials[1].params.count("x"));
  for (size_t i = 2; i < 6; ++i) EXPECT_FALSE(trials[i].enqueued);
  for (const TrialRecord& r : trials) EXPECT_GE(r.sampler_ms, 0.0);
}

// The parameters of every trial a sweep ran, as canonical JSON, with how often each ran.
std::multiset<std::string> RanParams(const std::string& yaml, const std::vector<std::string>& sets = {}) {
  Result<StudyConfig> config = LoadConfigText(yaml, "s.yaml", sets);
  EXPECT_TRUE(config.ok()) << config.status().message();
  Sweep sweep(*config, 2);
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  EXPECT_TRUE(summary.ok()) << summary.status().message();
  std::multiset<std::string> ran;
  for (const TrialRecord& r : sweep.store()->trials()) ran.insert(ToJson(r.params).dump());
  return ran;
}

// For random, sobol and grid sampling the shards of a sweep run exactly the unsharded sweep's
// trials between them, enqueued configurations included, with nothing twice.
TEST(CoordinatorShards, ShardsPartitionTheUnshardedSweep) {
  const std::string space =
      "trial: {command: [sh]}\nspace:\n  x: {type: float, low: 0.0, high: 1.0, grid: [0.1, 0.2, 0.3, 0.4, 0.5]}\n"
      "  n: {type: int, low: 1, high: 4}\nenqueue:\n  - {x: 0.3, n: 2}\n  - {x: 0.77, n: 1}\n";
  for (const std::string sampler : {"random", "sobol", "grid"}) {
    for (const int n_trials : {23, 200}) {  // the grid has 20 points: 200 uses it up
      SCOPED_TRACE(sampler + " " + std::to_string(n_trials));
      const std::string yaml = "study: {name: s, n_trials: " + std::to_string(n_trials) +
                               "}\nsampler: {kind: " + sampler + ", seed: 11}\n" + space;
      const std::multiset<std::string> whole = RanParams(yaml);
      std::multiset<std::string> joined;
      for (int k = 0; k < 3; ++k) {
        const std::multiset<std::string> part = RanParams(yaml, {"study.shard=" + std::to_string(k) + "/3"});
        joined.insert(part.begin(), part.end());
      }
      EXPECT_EQ(joined, whole);
      EXPECT_EQ(std::set<std::string>(whole.begin(), whole.end()).size(), whole.size());
    }
  }
}

// Model-based samplers cannot share a model across shards: each shard is a search of its own,
// with its own seed, and the shards together run n_trials.
TEST(CoordinatorShards, ModelBasedShardsAreIndependentSearchesOfTheirShare) {
  const std::string yaml =
      "study: {name: s, n_trials: 25}\nsampler: {kind: tpe, seed: 4, n_startup_trials: 3}\ntrial: {command: [sh]}\n"
      "space:\n  x: {type: float, low: 0.0, high: 1.0}\n  n: {type: int, low: 1, high: 4}\n";
  std::vector<std::multiset<std::string>> parts;
  size_t total = 0;
  for (int k = 0; k < 4; ++k) {
    parts.push_back(RanParams(yaml, {"study.shard=" + std::to_string(k) + "/4"}));
    total += parts.back().size();
    EXPECT_EQ(parts.back().size(), k == 0 ? 7u : 6u);
  }
  EXPECT_EQ(total, 25u);
  EXPECT_NE(*parts[0].begin(), *parts[1].begin());  // different seeds, different first proposals
}

TEST(Coordinator, AWorkerThatCannotStartTrialsStopsTheSweepInsteadOfFailingThemAll) {
  Sweep sweep(Config("{name: c, n_trials: 40, direction: maximize}", "{kind: random, seed: 3}"), 2);
  sweep.launcher().fail_start_from = 5;  // the trial folders' disk turns read-only after four trials
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_NE(summary->worker_fault.find("cannot start trials: /tmp/unused.trials/"), std::string::npos)
      << summary->worker_fault;
  EXPECT_NE(summary->worker_fault.find("Read-only file system"), std::string::npos);
  EXPECT_NE(sweep.progress_text.find("error: worker rank"), std::string::npos) << sweep.progress_text;
  const auto& trials = sweep.store()->trials();
  std::int64_t complete = 0, not_started = 0, queued = 0;
  for (const TrialRecord& r : trials) {
    EXPECT_NE(r.state, TrialState::kFail) << r.reason;  // no stream of FAILs
    if (r.state == TrialState::kComplete) ++complete;
    if (r.state != TrialState::kInterrupted) continue;
    if (r.reason.rfind("not started: /tmp/unused.trials/", 0) == 0) {
      ++not_started;
    } else {  // waiting in a worker's queue (workers.queue): never tried once the worker failed
      EXPECT_EQ(r.reason.rfind("interrupted: not started: worker rank", 0), 0u) << r.reason;
      EXPECT_NE(r.reason.find("it was queued on this worker"), std::string::npos) << r.reason;
      ++queued;
    }
  }
  EXPECT_EQ(complete, 4);
  EXPECT_GE(not_started, 1);
  EXPECT_LE(not_started, 2);  // one per worker at most: nothing is started after the first
  EXPECT_LE(queued, 2);
  EXPECT_EQ(static_cast<std::int64_t>(trials.size()), complete + not_started + queued);
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
  EXPECT_EQ(env.at("CLEANSWEEP_PRUNING"), "0");  // no pruner: a trial need not wait for a notice
}

TEST(Coordinator, TrialsHearWhetherTheSweepMaySendANotice) {
  // Workers read the config's text, as rank 0 sends it: the pruner goes in there.
  for (const char* sampler : {"{kind: random}\npruner: {kind: median}", "{kind: pbt, population: 2, interval: 1}"}) {
    Sweep sweep(Config("{name: c, n_trials: 2}", sampler), 1);
    const SystemClock clock;
    ASSERT_TRUE(sweep.Run(clock).ok()) << sampler;
    EXPECT_EQ(sweep.launcher().last_env().at("CLEANSWEEP_PRUNING"), "1") << sampler;
  }
}

}  // namespace
}  // namespace cleansweep

namespace cleansweep {
namespace {

const TrialRecord* Find(const std::vector<TrialRecord>& trials, std::int64_t number) {
  for (const TrialRecord& r : trials) {
    if (r.number == number) return &r;
  }
  return nullptr;
}

TEST(CoordinatorRetries, ACrashedTrialRunsAgainWithItsParametersUntilItSucceeds) {
  StudyConfig config = Config("{name: r, n_trials: 6, direction: maximize}", "{kind: random, seed: 4}");
  config.trial.retries = 2;
  Sweep sweep(config, 2);
  sweep.launcher().crash_until_attempt = 3;  // attempts 1 and 2 crash, the third completes
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->finished, 6);  // n_trials counts configurations, not attempts
  EXPECT_EQ(summary->complete, 6);
  const auto& trials = sweep.store()->trials();
  ASSERT_EQ(trials.size(), 18u);
  int fresh = 0;
  for (const TrialRecord& r : trials) {
    if (r.retry_of < 0) {
      ++fresh;
      EXPECT_EQ(r.attempt, 1);
      EXPECT_EQ(r.state, TrialState::kCrash);
      continue;
    }
    const TrialRecord* parent = Find(trials, r.retry_of);
    ASSERT_NE(parent, nullptr) << "trial " << r.number << " retries a trial that is not there";
    EXPECT_LT(parent->number, r.number);
    EXPECT_EQ(r.attempt, parent->attempt + 1);
    EXPECT_EQ(parent->state, TrialState::kCrash);
    EXPECT_EQ(r.params, parent->params);
    EXPECT_EQ(r.state, r.attempt == 3 ? TrialState::kComplete : TrialState::kCrash);
  }
  EXPECT_EQ(fresh, 6);
}

TEST(CoordinatorRetries, GivesUpAfterTrialRetriesAndOnlyRetriesTheListedStates) {
  StudyConfig config = Config("{name: r, n_trials: 4, direction: maximize}", "{kind: random, seed: 4}");
  config.trial.retries = 1;
  Sweep sweep(config, 2);
  sweep.launcher().crash_until_attempt = 100;  // always crashes
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->finished, 4);
  EXPECT_EQ(summary->complete, 0);
  EXPECT_EQ(sweep.store()->trials().size(), 8u);  // each configuration twice: the trial and one retry

  config.trial.retry_on = {TrialState::kTimeout};  // crashes are not retried
  Sweep no_retry(config, 2);
  no_retry.launcher().crash_until_attempt = 100;
  ASSERT_TRUE(no_retry.Run(clock).ok());
  EXPECT_EQ(no_retry.store()->trials().size(), 4u);
}

TrialRecord Prior(std::int64_t number, TrialState state, double x, std::int64_t retry_of = -1) {
  TrialRecord r;
  r.number = number;
  r.state = state;
  r.params = {{"x", x}, {"n", std::int64_t{2}}};
  r.retry_of = retry_of;
  r.attempt = retry_of < 0 ? 1 : 2;
  if (state == TrialState::kComplete) r.value = FakeObjective(r.params);
  return r;
}

TEST(CoordinatorResume, KeepsFinishedTrialsRerunsCutOffOnesAndContinuesTheNumbering) {
  StudyConfig config = Config("{name: r, n_trials: 6, direction: maximize}", "{kind: random, seed: 9}");
  Sweep sweep(config, 2);
  std::vector<TrialRecord> prior = {
      Prior(0, TrialState::kComplete, 0.1),
      Prior(1, TrialState::kRunning, 0.2),      // the last run was killed while it ran
      Prior(2, TrialState::kInterrupted, 0.3),  // stopped by a signal, not yet run again
      Prior(3, TrialState::kCrash, 0.4),        // final: no retries configured
      Prior(4, TrialState::kInterrupted, 0.5),  // stopped, and already run again as trial 5
      Prior(5, TrialState::kComplete, 0.5, 4),
  };
  for (const TrialRecord& r : prior) ASSERT_TRUE(sweep.store()->PutTrial(r).ok());  // the file as it was
  sweep.prepare = [&](Coordinator& c) { c.Resume(prior, {{0, 0, 0.5, 1.0, {}}}); };
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->finished, 6);  // 0, 3, 5 from before; the reruns of 1 and 2, and one new trial
  const auto& trials = sweep.store()->trials();
  ASSERT_EQ(trials.size(), 9u);
  EXPECT_EQ(Find(trials, 1)->state, TrialState::kInterrupted);  // its RUNNING row was corrected
  EXPECT_NE(Find(trials, 1)->reason.find("coordinator stopped"), std::string::npos);
  std::set<std::int64_t> rerun_of;
  for (std::int64_t n = 6; n <= 8; ++n) {
    const TrialRecord* r = Find(trials, n);
    ASSERT_NE(r, nullptr) << "numbering must continue at 6";
    EXPECT_EQ(r->state, TrialState::kComplete);
    if (r->retry_of >= 0) {
      rerun_of.insert(r->retry_of);
      EXPECT_EQ(r->params, Find(prior, r->retry_of)->params);
      EXPECT_EQ(r->attempt, 2);
    } else {
      // A new trial gets the parameters an unbroken run would have given the 6th fresh trial
      // (sample index 5: trials 0-4 were fresh).
      Result<std::unique_ptr<Sampler>> sampler = MakeSampler(config);
      ASSERT_TRUE(sampler.ok());
      EXPECT_EQ(r->params, *(*sampler)->Ask(5, TrialHistory{}));
    }
  }
  EXPECT_EQ(rerun_of, (std::set<std::int64_t>{1, 2}));
}

// Issue 17: an interrupted trial that declared a checkpoint goes on from it under its own number
// (a new attempt, the ended one kept in /attempts), its steps continuing without a repeat; one
// without a checkpoint runs again from the start under a new number, as before.
TEST(CoordinatorResume, AnInterruptedTrialWithACheckpointGoesOnFromItUnderItsNumber) {
  StudyConfig config = Config("{name: r, n_trials: 3, direction: maximize}", "{kind: random, seed: 9}");
  Sweep sweep(config, 2);
  sweep.launcher().checkpoints = true;
  std::vector<TrialRecord> prior = {Prior(0, TrialState::kComplete, 0.1), Prior(1, TrialState::kRunning, 0.2),
                                    Prior(2, TrialState::kInterrupted, 0.3)};
  prior[1].checkpoint_step = 2;  // killed with the job after declaring step 2 and reporting step 3
  prior[1].last_step = 3;
  std::vector<IntermediateValue> steps;
  for (std::int64_t s = 0; s <= 3; ++s) steps.push_back({1, s, 0.1 * static_cast<double>(s), 1.0, {}});
  for (const TrialRecord& r : prior) ASSERT_TRUE(sweep.store()->PutTrial(r).ok());
  for (const IntermediateValue& v : steps) ASSERT_TRUE(sweep.store()->AppendIntermediate(v).ok());
  sweep.prepare = [&](Coordinator& c) { c.Resume(prior, steps); };
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_NE(sweep.progress_text.find("1 go on from their checkpoints"), std::string::npos) << sweep.progress_text;
  const auto& trials = sweep.store()->trials();
  ASSERT_EQ(trials.size(), 4u);  // 0, 1 continued, 2 interrupted, 3 its rerun from the start
  const TrialRecord* continued = Find(trials, 1);
  EXPECT_EQ(continued->state, TrialState::kComplete);
  EXPECT_EQ(continued->attempt, 2);
  EXPECT_EQ(continued->retry_of, -1);
  EXPECT_EQ(continued->resumed_from, 2);
  EXPECT_EQ(continued->params, prior[1].params);
  EXPECT_GE(continued->checkpoint_step, 3);
  EXPECT_EQ(sweep.launcher().resumed(), (std::map<std::int64_t, std::int64_t>{{1, 2}}));
  ASSERT_EQ(sweep.store()->attempts().size(), 1u);
  const TrialRecord& first = sweep.store()->attempts()[0];
  EXPECT_EQ(first.number, 1);
  EXPECT_EQ(first.attempt, 1);
  EXPECT_EQ(first.state, TrialState::kInterrupted);
  EXPECT_EQ(first.checkpoint_step, 2);
  const TrialRecord* rerun = Find(trials, 3);
  EXPECT_EQ(rerun->retry_of, 2);
  EXPECT_EQ(rerun->resumed_from, -1);
  // Trial 1's steps: 0-3 from before, then the new attempt's from 4 on; its step 3 again is not stored.
  std::vector<std::int64_t> reported;
  for (const IntermediateValue& v : sweep.store()->intermediate()) {
    if (v.trial == 1) reported.push_back(v.step);
  }
  ASSERT_GE(reported.size(), 5u);
  for (size_t i = 0; i < reported.size(); ++i) EXPECT_EQ(reported[i], static_cast<std::int64_t>(i));
}

// Issue 17: pruner.resume. Trials that are not good enough at a rung pause there (PAUSED attempts)
// and go on from their checkpoint when promoted, under their own number; whatever the timing, the
// best 1/eta of the trials at each rung went past it, every step is reported once, no trial starts
// over, and no trial is left PAUSED once the study is done.
StudyConfig PausingAsha(std::int64_t n_trials) {
  StudyConfig config =
      Config("{name: p, n_trials: " + std::to_string(n_trials) + ", direction: maximize}", "{kind: random, seed: 3}");
  config.pruner.kind = "asha";  // rungs at steps 1 and 3; 9 is the last step, where nothing is decided
  config.pruner.min_resource = 1;
  config.pruner.max_resource = 9;
  config.pruner.reduction_factor = 3;
  config.pruner.resume = true;
  return config;
}

TEST(CoordinatorPromotions, PausedTrialsGoOnFromTheirRungWhenPromotedAndTheBestOfEachRungWentPastIt) {
  // Each trial worse than the one before: all but the first one or two pause at rung 0, and as the
  // rung fills the best of them are promoted (12 at the rung keep 4), whatever the timing.
  StudyConfig config = PausingAsha(12);
  for (int i = 0; i < 12; ++i) config.enqueue.push_back({{"x", 0.9 - 0.05 * i}, {"n", std::int64_t{1}}});
  Sweep sweep(config, 2);
  sweep.launcher().checkpoints = true;
  sweep.launcher().steps = 10;  // steps 0-9; FakeObjective x (step + 1) at each: the same order at every rung
  sweep.launcher().step_pause = Millis(3);
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->finished, 12);
  const auto& trials = sweep.store()->trials();
  ASSERT_EQ(trials.size(), 12u) << "promotions continue trials: no new numbers";
  std::map<std::int64_t, std::map<std::int64_t, int>> steps;  // trial -> step -> times reported
  for (const IntermediateValue& v : sweep.store()->intermediate()) ++steps[v.trial][v.step];
  for (const TrialRecord& r : trials) {
    EXPECT_TRUE(r.state == TrialState::kComplete || r.state == TrialState::kPruned)
        << "trial " << r.number << " ended " << TrialStateName(r.state);
    std::int64_t expect = 0;
    for (const auto& [step, times] : steps[r.number]) {
      EXPECT_EQ(step, expect++) << "trial " << r.number << ": steps run on without a gap";
      EXPECT_EQ(times, 1) << "trial " << r.number << " reported step " << step << " twice";
    }
    if (r.state == TrialState::kComplete) {
      EXPECT_DOUBLE_EQ(*r.value, FakeObjective(r.params));
    }
    if (r.state == TrialState::kPruned) {
      EXPECT_NE(r.reason.find("no promotion came before the study ended"), std::string::npos) << r.reason;
    }
  }
  // Every earlier attempt is a pause at a rung with a checkpoint, and the next attempt went on from it.
  ASSERT_FALSE(sweep.store()->attempts().empty()) << "no trial paused: nothing was tested";
  std::map<std::int64_t, std::vector<const TrialRecord*>> attempts;
  for (const TrialRecord& a : sweep.store()->attempts()) attempts[a.number].push_back(&a);
  for (const auto& [number, earlier] : attempts) {
    const TrialRecord* last = Find(trials, number);
    EXPECT_EQ(last->attempt, static_cast<int>(earlier.size()) + 1);
    EXPECT_EQ(last->resumed_from, earlier.back()->checkpoint_step);
    for (size_t i = 0; i < earlier.size(); ++i) {
      EXPECT_EQ(earlier[i]->state, TrialState::kPaused);
      EXPECT_EQ(earlier[i]->attempt, static_cast<int>(i) + 1);
      EXPECT_GE(earlier[i]->checkpoint_step, 1) << "paused at a rung";
      EXPECT_EQ(earlier[i]->resumed_from, i == 0 ? -1 : earlier[i - 1]->checkpoint_step) << "never from the start";
    }
  }
  // ASHA's promise, at each rung that decides: its best 1/3 (at least one) went past it.
  for (const std::int64_t rung_step : {1, 3}) {
    std::vector<std::pair<double, std::int64_t>> at_rung;  // value, trial
    for (const TrialRecord& r : trials) {
      const auto it = steps[r.number].lower_bound(rung_step);
      if (it == steps[r.number].end()) continue;
      for (const IntermediateValue& v : sweep.store()->intermediate()) {
        if (v.trial == r.number && v.step == it->first) at_rung.push_back({v.value, r.number});
      }
    }
    std::sort(at_rung.rbegin(), at_rung.rend());
    const size_t keep = std::max<size_t>(1, at_rung.size() / 3);
    for (size_t i = 0; i < keep; ++i) {
      const std::int64_t n = at_rung[i].second;
      EXPECT_GE(steps[n].rbegin()->first, rung_step == 1 ? 3 : 9)
          << "trial " << n << " is among the best at step " << rung_step << " but did not go on";
    }
  }
  EXPECT_NE(sweep.progress_text.find("it goes on from its checkpoint at step"), std::string::npos)
      << sweep.progress_text;
}

// A study killed with trials paused: on resume they wait for promotion as before (one promoted at
// once when the file already says it may go on), and those never promoted end PRUNED. Without
// pruner.resume, a resumed study settles them PRUNED at once.
TEST(CoordinatorPromotions, AResumedStudyPromotesItsPausedTrialsAndSettlesTheRest) {
  std::vector<TrialRecord> prior;
  std::vector<IntermediateValue> steps;
  const double at_rung[] = {50, 40, 30, 20, 10, 5};  // values at step 1
  for (std::int64_t n = 0; n < 6; ++n) {
    TrialRecord r = Prior(n, n == 0 ? TrialState::kComplete : TrialState::kPaused, 0.1);
    r.checkpoint_step = n == 0 ? 9 : 1;
    r.last_step = n == 0 ? 9 : 1;
    r.reason = "paused at rung 0 (step 1)";
    for (std::int64_t s = 0; s <= r.last_step; ++s) {
      steps.push_back({n, s, s == 1 ? at_rung[n] : 100.0 * static_cast<double>(s), 1.0, {}});
    }
    prior.push_back(r);
  }
  for (const bool resume : {true, false}) {
    StudyConfig config = PausingAsha(6);
    config.pruner.resume = resume;
    Sweep sweep(config, 2);
    sweep.launcher().checkpoints = true;
    sweep.launcher().steps = 10;
    for (const TrialRecord& r : prior) ASSERT_TRUE(sweep.store()->PutTrial(r).ok());
    for (const IntermediateValue& v : steps) ASSERT_TRUE(sweep.store()->AppendIntermediate(v).ok());
    sweep.prepare = [&](Coordinator& c) { c.Resume(prior, steps); };
    const SystemClock clock;
    Result<RunSummary> summary = sweep.Run(clock);
    ASSERT_TRUE(summary.ok()) << summary.status().message();
    EXPECT_EQ(summary->finished, 6);
    const auto& trials = sweep.store()->trials();
    ASSERT_EQ(trials.size(), 6u);
    for (const TrialRecord& r : trials) EXPECT_NE(r.state, TrialState::kPaused) << r.number;
    if (resume) {
      EXPECT_NE(sweep.progress_text.find(", 5 paused,"), std::string::npos) << sweep.progress_text;
      // Six at rung 0 keep two: trial 0 went on long ago, trial 1 goes on now, from step 1.
      EXPECT_EQ(sweep.launcher().resumed(), (std::map<std::int64_t, std::int64_t>{{1, 1}}));
      EXPECT_EQ(Find(trials, 1)->attempt, 2);
      EXPECT_EQ(Find(trials, 1)->resumed_from, 1);
      ASSERT_EQ(sweep.store()->attempts().size(), 1u);
      EXPECT_EQ(sweep.store()->attempts()[0].state, TrialState::kPaused);
      for (std::int64_t n = 2; n < 6; ++n) {
        EXPECT_EQ(Find(trials, n)->state, TrialState::kPruned);
        EXPECT_NE(Find(trials, n)->reason.find("no promotion came before the study ended"), std::string::npos);
      }
    } else {
      EXPECT_EQ(sweep.launcher().started, 0);
      for (std::int64_t n = 1; n < 6; ++n) {
        EXPECT_EQ(Find(trials, n)->state, TrialState::kPruned);
        EXPECT_NE(Find(trials, n)->reason.find("resumed without pruner.resume"), std::string::npos);
      }
    }
  }
}

// Issue 17: population-based training on the pause and promotion machinery. Members pause at
// every interval; the bottom one is replaced by a new trial that starts from a top member's
// checkpoint (linked into its own folder before it starts) with derived parameters, one
// generation on; the rest go on. n_trials bounds members and replacements together.
// A PBT study of fake trials that report steps 0-8 and write each checkpoint as a file under `dir`.
StudyConfig PbtConfig(std::int64_t n_trials, int seed) {
  Result<StudyConfig> config =
      LoadConfigText("study: {name: p, n_trials: " + std::to_string(n_trials) +
                         ", direction: maximize}\nsampler: {kind: pbt, seed: " + std::to_string(seed) +
                         ", population: 4, interval: 2, perturb: [0.8, 1.2], resample_probability: 0}\n"
                         "trial: {command: [sh]}\nspace:\n  x: {type: float, low: 0.0, high: 1.0}\n  n: {type: int, "
                         "low: 1, high: 4}\n",
                     "p.yaml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  return *config;
}

void CheckpointingSteps(Sweep* sweep, const testing::TempDir& dir) {
  sweep->trials_root = dir.File("p.trials");
  sweep->launcher().checkpoints = sweep->launcher().write_checkpoints = true;
  sweep->launcher().steps = 9;  // steps 0-8: checks at 2, 4 and 6 (and 8, the last)
  sweep->launcher().step_pause = Millis(2);
}

// Issue 36: members that never reach a check (2 steps, checks every 2: steps 0 and 1) are never
// replaced, so the population ends at 4 of 12 trials; the sweep says so instead of just stopping.
TEST(CoordinatorPbt, APopulationThatEndsShortOfNTrialsSaysWhy) {
  Sweep sweep(PbtConfig(12, 5), 2);
  sweep.launcher().steps = 2;
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->finished, 4);
  const std::string why =
      "population-based training ended at 4 of 12 trials: every member of its population of 4 ended, and a new "
      "trial starts only to replace a member (a member pauses at a check every 2 steps, and those in the bottom 25% "
      "are replaced); 0 were replaced";
  EXPECT_EQ(summary->stopped_early, why);
  EXPECT_EQ(sweep.store()->stop_reason(), why);
  EXPECT_NE(sweep.progress_text.find("ended before study.n_trials: " + why), std::string::npos) << sweep.progress_text;
  Sweep full(PbtConfig(4, 5), 2);  // n_trials = the population: nothing ended short, nothing said
  full.launcher().steps = 2;
  ASSERT_TRUE(full.Run(clock).ok());
  EXPECT_EQ(full.store()->stop_reason(), "");
  EXPECT_EQ(full.progress_text.find("ended before"), std::string::npos) << full.progress_text;
}

TEST(CoordinatorPbt, TheBottomMembersAreReplacedFromTheTopMembersCheckpoints) {
  testing::TempDir dir;
  Sweep sweep(PbtConfig(14, 5), 2);
  CheckpointingSteps(&sweep, dir);
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  const auto& trials = sweep.store()->trials();
  EXPECT_LE(trials.size(), 14u);
  EXPECT_EQ(sweep.launcher().missing_checkpoints.load(), 0) << "a trial started without its checkpoint";
  int children = 0, replaced = 0;
  for (const TrialRecord& r : trials) {
    EXPECT_TRUE(r.state == TrialState::kComplete || r.state == TrialState::kPruned)
        << "trial " << r.number << " " << TrialStateName(r.state) << ": " << r.reason;
    if (r.state == TrialState::kPruned) {
      ++replaced;
      EXPECT_EQ(r.reason.rfind("replaced at step ", 0), 0u) << r.reason;
    }
    if (r.parent < 0) {
      EXPECT_EQ(r.generation, 0);
      EXPECT_LT(r.number, 4) << "only the population's first members are drawn afresh";
      continue;
    }
    ++children;
    const TrialRecord* parent = Find(trials, r.parent);
    ASSERT_NE(parent, nullptr);
    EXPECT_EQ(r.generation, parent->generation + 1);
    // Where its first attempt started (later attempts go on from its own checkpoints after pauses).
    std::int64_t started = r.attempt == 1 ? r.resumed_from : -1;
    for (const TrialRecord& a : sweep.store()->attempts()) {
      if (a.number == r.number && a.attempt == 1) started = a.resumed_from;
    }
    EXPECT_GE(started, 2) << "from one of the parent's checkpoints";
    EXPECT_NE(r.params, parent->params) << "explored, not copied";
    std::int64_t first_step = -1;
    for (const IntermediateValue& v : sweep.store()->intermediate()) {
      if (v.trial == r.number && first_step < 0) first_step = v.step;
    }
    EXPECT_EQ(first_step, started + 1) << "trial " << r.number << " goes on from its parent's step";
  }
  EXPECT_GT(children, 0) << "nothing was replaced: nothing was tested";
  EXPECT_EQ(replaced, children) << "each replacement ends one member";
  for (const TrialRecord& r : trials) EXPECT_LE(r.generation, children);
}

// A member that fails leaves the population; the others go on and replace each other as before.
TEST(CoordinatorPbt, AFailedMemberLeavesThePopulationAndTheRestGoOn) {
  testing::TempDir dir;
  Sweep sweep(PbtConfig(12, 6), 2);
  CheckpointingSteps(&sweep, dir);
  sweep.launcher().crash_trials = {1};  // crashes in its second step
  sweep.launcher().crash_after_steps = 2;
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  const auto& trials = sweep.store()->trials();
  EXPECT_EQ(Find(trials, 1)->state, TrialState::kCrash);
  int complete = 0;
  for (const TrialRecord& r : trials) {
    EXPECT_NE(r.parent, 1) << "trial " << r.number << " started from the failed member";
    EXPECT_NE(r.state, TrialState::kPaused);
    complete += r.state == TrialState::kComplete;
  }
  EXPECT_GE(complete, 1);
  EXPECT_EQ(sweep.launcher().missing_checkpoints.load(), 0);
}

// Issue 18: study.stop_when. No new trial starts once it is met; those running finish and are
// recorded as usual, the study is complete (not interrupted), and the reason is in the store.
TEST(CoordinatorStopWhen, ATargetReachedStartsNoNewTrialsAndLetsRunningOnesFinish) {
  // FakeObjective is x + 10 n: any trial with n = 4 reaches 40.
  Sweep sweep(
      Config("{name: t, n_trials: 500, direction: maximize, stop_when: {target: 40}}", "{kind: random, seed: 5}"), 3);
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  ASSERT_TRUE(summary->best);
  EXPECT_GE(*summary->best->value, 40);
  EXPECT_FALSE(summary->interrupted);
  EXPECT_LT(summary->finished, 500);
  // The reason names the best trial when it stopped; a running trial may finish better afterwards.
  const std::string prefix = "the target was reached: trial ";
  ASSERT_EQ(summary->stopped_early.rfind(prefix, 0), 0u) << summary->stopped_early;
  const std::int64_t named = std::stoll(summary->stopped_early.substr(prefix.size()));
  const auto named_record = std::find_if(sweep.store()->trials().begin(), sweep.store()->trials().end(),
                                         [&](const TrialRecord& r) { return r.number == named; });
  ASSERT_NE(named_record, sweep.store()->trials().end());
  EXPECT_GE(*named_record->value, 40);
  EXPECT_NE(summary->stopped_early.find("has value = " + FormatDouble(*named_record->value)), std::string::npos)
      << summary->stopped_early;
  EXPECT_NE(summary->stopped_early.find("(study.stop_when.target: 40.0)"), std::string::npos);
  EXPECT_EQ(sweep.store()->stop_reason(), summary->stopped_early);
  EXPECT_NE(sweep.progress_text.find("stopping early: the target was reached"), std::string::npos);
  // The first trial to reach it, and after it only what was already handed out (a running trial
  // and a queued one per worker at most).
  std::int64_t first_hit = -1;
  for (const TrialRecord& r : sweep.store()->trials()) {
    EXPECT_EQ(r.state, TrialState::kComplete) << "trial " << r.number << " was not left to finish";
    if (*r.value >= 40 && (first_hit < 0 || r.number < first_hit)) first_hit = r.number;
  }
  ASSERT_GE(first_hit, 0);
  EXPECT_LE(static_cast<std::int64_t>(sweep.store()->trials().size()), first_hit + 1 + 2 * 3);
}

TEST(CoordinatorStopWhen, NoImprovementCountsTrialsSinceTheBestAndSaysWhichWasBest) {
  Sweep sweep(Config("{name: n, n_trials: 500, direction: minimize, stop_when: {no_improvement: 8}}",
                     "{kind: random, seed: 2}"),
              2);
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_LT(summary->finished, 500);
  ASSERT_TRUE(summary->best);
  // The best when it stopped; a trial still running then may finish better.
  const std::string prefix = "no improvement in the last 8 trials (best: trial ";
  ASSERT_EQ(summary->stopped_early.rfind(prefix, 0), 0u) << summary->stopped_early;
  const std::int64_t best = std::stoll(summary->stopped_early.substr(prefix.size()));
  EXPECT_NE(summary->stopped_early.find(std::to_string(best) + ", value = "), std::string::npos);
  // At least 8 trials ended after the best one (in the order results came, which numbers follow
  // here but for the few that run side by side).
  std::int64_t after_best = 0;
  for (const TrialRecord& r : sweep.store()->trials()) after_best += r.number > best;
  EXPECT_GE(after_best, 8 - 2);
  EXPECT_EQ(sweep.store()->stop_reason(), summary->stopped_early);
}

TEST(CoordinatorStopWhen, AResumedStudyThatAlreadyMetItRunsNothingAndOneThatNoLongerDoesClearsTheReason) {
  std::vector<TrialRecord> prior = {Prior(0, TrialState::kComplete, 0.1), Prior(1, TrialState::kComplete, 0.9),
                                    Prior(2, TrialState::kInterrupted, 0.3)};
  {  // 20.9 >= 20: met before anything runs, and the interrupted trial is not run again
    Sweep sweep(Config("{name: r, n_trials: 10, direction: maximize, stop_when: {target: 20}}", "{kind: random}"), 2);
    for (const TrialRecord& r : prior) ASSERT_TRUE(sweep.store()->PutTrial(r).ok());
    sweep.prepare = [&](Coordinator& c) { c.Resume(prior, {}); };
    const SystemClock clock;
    Result<RunSummary> summary = sweep.Run(clock);
    ASSERT_TRUE(summary.ok()) << summary.status().message();
    EXPECT_EQ(sweep.store()->trials().size(), 3u);
    EXPECT_FALSE(summary->interrupted);
    EXPECT_EQ(summary->stopped_early.rfind("the target was reached: trial 1 has value = 20.9", 0), 0u)
        << summary->stopped_early;
  }
  {  // the target raised (a resume with --set): the sweep goes on, and the old reason is gone
    Sweep sweep(Config("{name: r, n_trials: 10, direction: maximize, stop_when: {target: 99}}", "{kind: random}"), 2);
    for (const TrialRecord& r : prior) ASSERT_TRUE(sweep.store()->PutTrial(r).ok());
    ASSERT_TRUE(sweep.store()->RecordStopReason("the target was reached: trial 1").ok());
    sweep.prepare = [&](Coordinator& c) { c.Resume(prior, {}); };
    const SystemClock clock;
    Result<RunSummary> summary = sweep.Run(clock);
    ASSERT_TRUE(summary.ok()) << summary.status().message();
    EXPECT_EQ(summary->finished, 10);
    EXPECT_EQ(summary->stopped_early, "");
    EXPECT_EQ(sweep.store()->stop_reason(), "");
  }
}

TEST(CoordinatorStop, AGracefulStopLetsRunningTrialsEndInterruptedAndReportsIt) {
  StudyConfig config = Config("{name: s, n_trials: 50, direction: maximize}", "{kind: random, seed: 1}");
  config.trial.stop_grace = Millis(30);
  Sweep sweep(config, 3, /*hang=*/true);
  std::atomic<int> polls{0};
  sweep.prepare = [&](Coordinator& c) {
    c.SetStopPoll([&] { return ++polls > 5 ? StopRequest{1, "SIGUSR1 received"} : StopRequest{}; });
  };
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_TRUE(summary->interrupted);
  const auto& trials = sweep.store()->trials();
  ASSERT_EQ(trials.size(), 3u);  // one per worker; nothing new after the request
  for (const TrialRecord& r : trials) {
    EXPECT_EQ(r.state, TrialState::kInterrupted);
    EXPECT_NE(r.reason.find("SIGUSR1 received"), std::string::npos) << r.reason;
  }
}

TEST(CoordinatorStop, AStopThatComesWhenEveryTrialIsDoneIsNoInterruption) {
  // Slurm's --signal can land between the last result and the end: the study is complete then,
  // and a batch script that requeues on "stopped early" (exit 3) must not requeue it.
  Sweep sweep(Config("{name: s, n_trials: 6, direction: maximize}", "{kind: random, seed: 1}"), 2);
  const MemoryStudyStore* store = sweep.store();
  sweep.prepare = [&](Coordinator& c) {
    c.SetStopPoll([store] {
      const auto done = std::count_if(store->trials().begin(), store->trials().end(),
                                      [](const TrialRecord& r) { return r.state == TrialState::kComplete; });
      return done == 6 ? StopRequest{1, "SIGUSR1 received"} : StopRequest{};
    });
  };
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->finished, 6);
  EXPECT_FALSE(summary->interrupted);
}

TEST(CoordinatorStop, ATrialKilledByTheJobsStopSignalBeforeItsWorkerGotItIsInterruptedNotCrashed) {
  // Slurm's scancel or requeue signals a job's processes one after the other: the trial may die
  // of SIGTERM a moment before its worker's own SIGTERM arrives.
  Sweep sweep(Config("{name: s, n_trials: 4}", "{kind: random, seed: 1}"), 1);
  sweep.launcher().die_by_signal = SIGTERM;
  std::atomic<int>& deaths = sweep.launcher().deaths;
  std::atomic<int> polls_after_death{0};
  sweep.worker_signals = [&] {  // the worker's SIGTERM lands ten polls after the trial died
    return deaths > 0 && ++polls_after_death > 10 ? 1 : 0;
  };
  sweep.prepare = [&](Coordinator& c) {
    c.SetStopPoll([&] { return deaths > 0 ? StopRequest{1, "SIGTERM received"} : StopRequest{}; });
  };
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  ASSERT_EQ(sweep.store()->trials().size(), 1u);
  const TrialRecord& r = sweep.store()->trials()[0];
  EXPECT_EQ(r.state, TrialState::kInterrupted) << r.reason;
  EXPECT_NE(r.reason.find("which reached the trial too"), std::string::npos) << r.reason;
}

TEST(CoordinatorStop, ASecondRequestStopsAtOnceAndLeavesRunningRowsForResume) {
  StudyConfig config = Config("{name: s, n_trials: 50, direction: maximize}", "{kind: random, seed: 1}");
  config.trial.stop_grace = Millis(60'000);  // a graceful stop would wait a minute
  Sweep sweep(config, 2, /*hang=*/true);
  std::atomic<int> polls{0};
  sweep.prepare = [&](Coordinator& c) {
    c.SetStopPoll([&] {
      const int n = ++polls;
      return n > 8 ? StopRequest{2, "SIGINT received"} : n > 5 ? StopRequest{1, "SIGINT received"} : StopRequest{};
    });
  };
  const SystemClock clock;
  // Returns only once both workers have stopped: with the minute of grace, only the second
  // request can have stopped them this soon.
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok());
  EXPECT_TRUE(summary->interrupted);
  for (const TrialRecord& r : sweep.store()->trials()) {
    EXPECT_TRUE(r.state == TrialState::kRunning || r.state == TrialState::kInterrupted);
    // Stopped by the second request, not by the end of the minute's grace.
    if (r.state == TrialState::kInterrupted) {
      EXPECT_NE(r.reason.find("stopped at once"), std::string::npos) << r.reason;
    }
  }
}

// Every trial the progress output called finished, by number.
std::set<std::int64_t> PrintedFinished(const std::string& text) {
  std::set<std::int64_t> numbers;
  const std::regex line(R"(\] trial (\d+) (COMPLETE|FAIL|CRASH|PRUNED|TIMEOUT|OOM_GPU|OOM_HOST|INTERRUPTED))");
  for (std::sregex_iterator it(text.begin(), text.end(), line), end; it != end; ++it) {
    numbers.insert(std::stoll((*it)[1]));
  }
  return numbers;
}

// Issue 15: a failing study store (full disk, removed file) must stop the sweep with its error,
// tell every worker to stop, and lose nothing that was acknowledged: each trial the user saw
// finish is durable, finished, in the store.
TEST(CoordinatorFaults, AFailingStoreStopsTheSweepAndLosesNothingAcknowledged) {
  using Call = testing::FaultyStore::Call;
  for (const auto& [call, nth] : {std::pair{Call::kFlush, 6}, std::pair{Call::kPutTrial, 9}, std::pair{Call::kFlush, 1},
                                  std::pair{Call::kAppendIntermediate, 1}}) {
    SCOPED_TRACE("fault on call " + std::to_string(static_cast<int>(call)) + " #" + std::to_string(nth));
    Sweep sweep(Config("{name: c, n_trials: 30, direction: maximize}", "{kind: random, seed: 3}"), 3);
    testing::FaultyStore store(call, nth);
    sweep.store_override = &store;
    const SystemClock clock;
    Result<RunSummary> summary = sweep.Run(clock);  // returns: every worker was stopped, none hangs
    ASSERT_FALSE(summary.ok());
    EXPECT_EQ(summary.status().code(), Status::Code::kIoError);
    EXPECT_NE(summary.status().message().find("injected fault"), std::string::npos) << summary.status().message();
    const std::set<std::int64_t> printed = PrintedFinished(sweep.progress_text);
    for (const std::int64_t number : printed) {
      const auto it = store.durable().find(number);
      ASSERT_NE(it, store.durable().end()) << "trial " << number << " was printed as finished but is not durable";
      EXPECT_NE(it->second.state, TrialState::kRunning) << number;
    }
    if (nth > 1) {
      EXPECT_FALSE(printed.empty()) << "the fault came too early to test anything";
    }
  }
}

TEST(CoordinatorFaults, AFailedSendStopsTheSweepNamingTheRankAndKeepsTheRows) {
  Sweep sweep(Config("{name: c, n_trials: 30, direction: maximize}", "{kind: random, seed: 3}"), 3);
  sweep.fail_send = 12;  // Setup x3, then assignments: the 12th send is one of them
  testing::FaultyStore store(testing::FaultyStore::Call::kFlush, 1 << 30);
  sweep.store_override = &store;
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_FALSE(summary.ok());
  EXPECT_NE(summary.status().message().find("injected fault: send #12 to rank"), std::string::npos)
      << summary.status().message();
  for (const std::int64_t number : PrintedFinished(sweep.progress_text)) {
    ASSERT_TRUE(store.durable().count(number)) << number;
  }
  // The trial whose assignment was lost is RUNNING in the store: resume runs it again.
  int running = 0;
  for (const auto& [number, record] : store.durable()) running += record.state == TrialState::kRunning;
  EXPECT_GE(running, 1);
}

// Passes everything through, keeping the results the coordinator received; results from
// `deaf_to` (a rank) are dropped as if that worker never answered.
class ResultTap : public Transport {
 public:
  ResultTap(Transport* inner, std::vector<TrialRecord>* results, int deaf_to = 0,
            std::function<void()> on_result = nullptr)
      : inner_(inner), results_(results), deaf_to_(deaf_to), on_result_(std::move(on_result)) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  Status Send(int dest, const Message& message) override { return inner_->Send(dest, message); }
  Result<std::optional<Envelope>> Receive(Millis max_wait) override {
    Result<std::optional<Envelope>> got = inner_->Receive(max_wait);
    if (!got.ok() || !got->has_value()) return got;
    if (const auto* result = std::get_if<ResultMsg>(&(*got)->message)) {
      if ((*got)->source == deaf_to_) return std::optional<Envelope>();
      results_->push_back(result->record);
      if (on_result_) on_result_();
    }
    return got;
  }

 private:
  Transport* inner_;
  std::vector<TrialRecord>* results_;
  int deaf_to_;
  std::function<void()> on_result_;
};

// Runs `sweep` (hanging trials) with the store's `nth` flush failing; the results the coordinator
// received before Run returned.
std::vector<TrialRecord> RunWithFailingFlush(Sweep& sweep, int nth) {
  testing::FaultyStore store(testing::FaultyStore::Call::kFlush, nth);
  sweep.store_override = &store;
  std::vector<TrialRecord> results;
  sweep.wrap_transport = [&](Transport* inner) { return std::make_unique<ResultTap>(inner, &results); };
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  EXPECT_FALSE(summary.ok());
  // Their rows stay RUNNING (the store failed): resume runs them again.
  for (const auto& [number, record] : store.durable()) EXPECT_EQ(record.state, TrialState::kRunning) << number;
  return results;
}

// Under MPI a worker can be blocked sending a result that a failed coordinator never receives;
// the job would then hang in MPI_Finalize. A failed run kills what is running and hears every
// worker out before it returns, so the job can end in order.
TEST(CoordinatorFaults, AFailedRunKillsRunningTrialsAndHearsEveryWorkerBeforeItReturns) {
  Sweep sweep(Config("{name: c, n_trials: 30, direction: maximize}", "{kind: random, seed: 3}"), 3, /*hang=*/true);
  const std::vector<TrialRecord> results = RunWithFailingFlush(sweep, 3);  // a turn after all three started
  EXPECT_TRUE(sweep.workers_settled);
  ASSERT_EQ(results.size(), 3u) << "every running trial's result is received before Run returns";
  for (const TrialRecord& r : results) {
    EXPECT_EQ(r.state, TrialState::kInterrupted) << r.number;
    EXPECT_NE(r.reason.find("the coordinator failed (stopped at once)"), std::string::npos) << r.reason;
  }
  EXPECT_NE(sweep.progress_text.find("stopping: killing 3 running trials"), std::string::npos) << sweep.progress_text;
}

// A millisecond per read until Open(), a second per read after.
class GatedClock : public Clock {
 public:
  double Now() const override { return static_cast<double>(micros_ += open_ ? 1'000'000 : 1'000) / 1e6; }
  void Open() { open_ = true; }

 private:
  mutable std::atomic<long> micros_{0};
  std::atomic<bool> open_{false};
};

TEST(CoordinatorFaults, AWorkerThatIsNotHeardAfterAFailureLeavesTheJobToBeAborted) {
  Sweep sweep(Config("{name: c, n_trials: 30, direction: maximize}", "{kind: random, seed: 3}"), 2, /*hang=*/true);
  testing::FaultyStore store(testing::FaultyStore::Call::kFlush, 3);
  sweep.store_override = &store;
  std::vector<TrialRecord> results;
  // Once rank 1's result is in, the wait of kill_grace + 10 s passes at once. Not before: the hung
  // trials stream step reports until they are killed, each a clock read or two in the wait's loop,
  // and a loaded machine once let twenty of them through before rank 1's worker thread ran.
  GatedClock clock;
  sweep.wrap_transport = [&](Transport* inner) {
    return std::make_unique<ResultTap>(inner, &results, 2, [&clock] { clock.Open(); });
  };
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_FALSE(summary.ok());
  EXPECT_FALSE(sweep.workers_settled);
  EXPECT_EQ(results.size(), 1u);  // rank 1's; rank 2's was never heard
}

// Issue 19: how many trials each worker holds at once (handed out, result not yet received), at
// most, seen from the coordinator's side of the transport, into *most (which outlives the tap: the
// sweep destroys it when Run returns).
class HeldTap : public Transport {
 public:
  HeldTap(Transport* inner, int* most) : inner_(inner), held_(static_cast<size_t>(inner->size())), most_(most) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  Status Send(int dest, const Message& message) override {
    if (std::holds_alternative<AssignMsg>(message)) {
      *most_ = std::max(*most_, ++held_[static_cast<size_t>(dest)]);
    }
    return inner_->Send(dest, message);
  }
  Result<std::optional<Envelope>> Receive(Millis max_wait) override {
    Result<std::optional<Envelope>> got = inner_->Receive(max_wait);
    if (got.ok() && got->has_value() && std::holds_alternative<ResultMsg>((*got)->message)) {
      --held_[static_cast<size_t>((*got)->source)];
    }
    return got;
  }

 private:
  Transport* inner_;
  std::vector<int> held_;
  int* most_;
};

StudyConfig WithWorkers(const std::string& workers) {
  StudyConfig config = Config("{name: q, n_trials: 60, direction: maximize}", "{kind: random, seed: 5}");
  Result<StudyConfig> with = LoadConfigText(config.yaml_text + "workers: " + workers + "\n", "q.yaml");
  EXPECT_TRUE(with.ok()) << with.status().message();
  return *with;
}

// `ranks` workers; trials before `hang_from` complete, each saying it took `trial_seconds`, later
// ones run until stopped. The study stops once a worker holds `want` trials at once, or after a
// second. Returns the most trials a worker held at once.
int MostHeld(const std::string& workers, double trial_seconds, int want, int ranks = 2, int hang_from = 8) {
  StudyConfig config = WithWorkers(workers);
  config.trial.stop_grace = Millis(0);
  Sweep sweep(config, ranks);
  sweep.launcher().trial_seconds = trial_seconds;
  sweep.launcher().hang_from = hang_from;
  int most = 0;
  sweep.wrap_transport = [&](Transport* inner) { return std::make_unique<HeldTap>(inner, &most); };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  sweep.prepare = [&](Coordinator& c) {
    c.SetStopPoll([&] {
      const bool done = most >= want || std::chrono::steady_clock::now() > deadline;
      return done ? StopRequest{1, "enough seen"} : StopRequest{};
    });
  };
  const SystemClock clock;
  EXPECT_TRUE(sweep.Run(clock).ok());
  return most;
}

TEST(CoordinatorQueue, ABusyWorkerGetsItsNextTrialsBeforeItIsFree) {
  EXPECT_EQ(MostHeld("{queue: 1}", 0.5, 2), 2);  // one running, one waiting on the worker
  EXPECT_EQ(MostHeld("{queue: 2}", 0.5, 3), 3);
  EXPECT_EQ(MostHeld("{queue: 0}", 0.5, 2), 1);  // a trial at a time: a round trip between two
}

TEST(CoordinatorQueue, AutoQueuesOnlyWhileTrialsAreShort) {
  EXPECT_EQ(MostHeld("{queue: auto}", 0.01, 2), 2);  // 10 ms: the round trip is worth hiding
  // Half a second, a minute: the sampler would give up a trial's worth of information for a few
  // thousandths of a trial.
  EXPECT_EQ(MostHeld("{queue: auto}", 0.5, 2), 1);
  EXPECT_EQ(MostHeld("{queue: auto}", 60, 2), 1);
  // Six short trials ended, but eight workers are busy: the first to end are the shortest of the
  // first round, no sample of the run times yet (with 65,536 workers they were a few outliers).
  EXPECT_EQ(MostHeld("{queue: auto}", 0.01, 2, 8, 6), 1);
  EXPECT_EQ(MostHeld("{queue: auto}", 0.01, 2, 8, 12), 2);  // twelve ended: now they are
}

TEST(CoordinatorQueue, QueuedTrialsEachRunOnceWithTheirOwnParameters) {
  Sweep sweep(WithWorkers("{queue: 2}"), 3);
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->complete, 60);
  std::set<std::int64_t> numbers;
  for (const TrialRecord& r : sweep.store()->trials()) {
    numbers.insert(r.number);
    EXPECT_EQ(r.state, TrialState::kComplete);
    EXPECT_DOUBLE_EQ(*r.value, FakeObjective(r.params));
  }
  EXPECT_EQ(numbers.size(), 60u);
}

// A stop must not start what waits on a worker: each queued trial comes back INTERRUPTED, never
// started, and runs when the study resumes, with its parameters.
TEST(CoordinatorQueue, AStopReportsQueuedTrialsNotStartedAndResumeRunsThem) {
  StudyConfig config = Config("{name: s, n_trials: 50, direction: maximize}", "{kind: random, seed: 1}");
  config.workers.queue = 1;
  config.trial.stop_grace = Millis(30);
  Sweep sweep(config, 2, /*hang=*/true);
  int most = 0;
  sweep.wrap_transport = [&](Transport* inner) { return std::make_unique<HeldTap>(inner, &most); };
  sweep.prepare = [&](Coordinator& c) {
    c.SetStopPoll([&] { return most == 2 ? StopRequest{1, "SIGUSR1 received"} : StopRequest{}; });
  };
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_TRUE(summary->interrupted);
  std::vector<TrialRecord> trials = sweep.store()->trials();
  int ran = 0, queued = 0;
  for (const TrialRecord& r : trials) {
    ASSERT_EQ(r.state, TrialState::kInterrupted) << r.number;
    EXPECT_NE(r.reason.find("SIGUSR1 received"), std::string::npos) << r.reason;
    if (r.reason.find("not started") != std::string::npos) {
      ++queued;
      EXPECT_EQ(r.start_time, r.end_time);
    } else {
      ++ran;
    }
  }
  EXPECT_EQ(ran, 2);  // one per worker
  EXPECT_GE(queued, 1);
  EXPECT_LE(queued, 2);

  Sweep again(Config("{name: s, n_trials: 50, direction: maximize}", "{kind: random, seed: 1}"), 2);
  for (const TrialRecord& r : trials) ASSERT_TRUE(again.store()->PutTrial(r).ok());
  again.prepare = [&](Coordinator& c) { c.Resume(trials, {}); };
  ASSERT_TRUE(again.Run(clock).ok());
  std::set<std::int64_t> rerun_of;
  for (const TrialRecord& r : again.store()->trials()) {
    if (r.retry_of < 0) continue;
    rerun_of.insert(r.retry_of);
    EXPECT_EQ(r.params, Find(trials, r.retry_of)->params);
    EXPECT_EQ(r.state, TrialState::kComplete);
  }
  EXPECT_EQ(rerun_of.size(), trials.size()) << "every interrupted trial, queued or running, runs again";
}

// After a failure the coordinator hears each worker out: its running trial and those queued.
TEST(CoordinatorQueue, AFailedRunHearsTheQueuedTrialsToo) {
  StudyConfig config = Config("{name: c, n_trials: 30, direction: maximize}", "{kind: random, seed: 3}");
  config.workers.queue = 1;
  Sweep sweep(config, 2, /*hang=*/true);
  const std::vector<TrialRecord> results = RunWithFailingFlush(sweep, 4);  // after both workers hold two
  EXPECT_TRUE(sweep.workers_settled);
  ASSERT_EQ(results.size(), 4u) << "two running, two queued: every result is in before Run returns";
  int queued = 0;
  for (const TrialRecord& r : results) {
    EXPECT_EQ(r.state, TrialState::kInterrupted) << r.number;
    queued += r.reason.find("not started") != std::string::npos;
  }
  EXPECT_EQ(queued, 2);
  EXPECT_NE(sweep.progress_text.find("with the 2 queued behind them"), std::string::npos) << sweep.progress_text;
}

// Issue 16: trials that take several workers (gangs). Workers on nodes of four (node0, node1).
StudyConfig GangConfig(const std::string& trial, std::int64_t n_trials,
                       const std::string& space = "  x: {type: float, low: 0.0, high: 1.0}\n") {
  Result<StudyConfig> config =
      LoadConfigText("study: {name: g, n_trials: " + std::to_string(n_trials) +
                         ", direction: maximize}\nsampler: {kind: random, seed: 4}\ntrial: {command: [sh], " + trial +
                         "}\nspace:\n" + space,
                     "g.yaml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  return *config;
}

// Each trial's processes, by trial number: the environment each was started with.
std::map<std::int64_t, std::vector<std::map<std::string, std::string>>> ProcessesByTrial(FakeLauncher& launcher) {
  std::map<std::int64_t, std::vector<std::map<std::string, std::string>>> out;
  for (const auto& env : launcher.envs()) out[std::stoll(env.at("CLEANSWEEP_TRIAL"))].push_back(env);
  return out;
}

TEST(CoordinatorGangs, EachProcessOfAGangGetsTheTorchrunEnvironmentOnOneNode) {
  Sweep sweep(GangConfig("gpus: 4", 6), 8, false, 4);
  sweep.launcher().steps = 3;
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->complete, 6);
  const auto processes = ProcessesByTrial(sweep.launcher());
  ASSERT_EQ(processes.size(), 6u);
  for (const auto& [number, envs] : processes) {
    ASSERT_EQ(envs.size(), 4u) << "trial " << number;
    std::set<std::string> ranks, gpus, addrs, ports, nodes;
    for (const auto& env : envs) {
      ranks.insert(env.at("RANK"));
      EXPECT_EQ(env.at("WORLD_SIZE"), "4");
      EXPECT_EQ(env.at("LOCAL_RANK"), env.at("RANK")) << "one node: local ranks are the ranks";
      EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "4");
      EXPECT_EQ(env.at("GROUP_RANK"), "0");
      EXPECT_EQ(env.at("CLEANSWEEP_GPUS"), "4");
      gpus.insert(env.at("CUDA_VISIBLE_DEVICES"));
      addrs.insert(env.at("MASTER_ADDR"));
      ports.insert(env.at("MASTER_PORT"));
      EXPECT_NE(env.at("MASTER_PORT"), "0");
    }
    EXPECT_EQ(ranks, (std::set<std::string>{"0", "1", "2", "3"}));
    EXPECT_EQ(gpus, (std::set<std::string>{"0", "1", "2", "3"})) << "each process its own GPU";
    ASSERT_EQ(addrs.size(), 1u);
    EXPECT_TRUE(*addrs.begin() == "node0.example" || *addrs.begin() == "node1.example") << *addrs.begin();
    EXPECT_EQ(ports.size(), 1u) << "one rendezvous port per trial";
  }
  std::map<std::int64_t, int> reports;  // trial -> reports of step 1 (rank 0's only)
  for (const IntermediateValue& v : sweep.store()->intermediate()) reports[v.trial] += v.step == 1;
  for (const TrialRecord& r : sweep.store()->trials()) {
    EXPECT_EQ(r.state, TrialState::kComplete);
    EXPECT_DOUBLE_EQ(*r.value, FakeObjective(r.params));
    EXPECT_EQ(r.gpus, 4);
    EXPECT_TRUE(r.workers == "1-4" || r.workers == "5-8") << r.workers << ": one node, never split";
    EXPECT_EQ(r.gpu, "0,1,2,3");
    EXPECT_EQ(reports[r.number], 1) << "only rank 0 reports for the trial";
  }
  EXPECT_NE(sweep.progress_text.find(" (4 workers: ranks "), std::string::npos) << sweep.progress_text;
}

TEST(CoordinatorGangs, AMixedSizeStudyRunsEveryTrialAtItsSizeAndALargeOneSpansNodes) {
  StudyConfig config =
      GangConfig("gpus: \"{g}\"", 16,
                 "  x: {type: float, low: 0.0, high: 1.0}\n  g: {type: categorical, choices: [1, 2, 4, 8]}\n");
  Sweep sweep(config, 8, false, 4);
  sweep.launcher().steps = 2;
  sweep.launcher().step_pause = Millis(2);
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->complete, 16);
  const auto processes = ProcessesByTrial(sweep.launcher());
  std::set<std::int64_t> sizes;
  for (const TrialRecord& r : sweep.store()->trials()) {
    const auto g = std::get<std::int64_t>(r.params.at("g"));
    sizes.insert(g);
    EXPECT_EQ(r.gpus, g) << "trial " << r.number;
    ASSERT_EQ(processes.at(r.number).size(), static_cast<size_t>(g)) << "trial " << r.number;
    std::set<std::string> groups;
    for (const auto& env : processes.at(r.number)) {
      groups.insert(env.at("GROUP_RANK"));
      EXPECT_EQ(env.at("WORLD_SIZE"), std::to_string(g));
      EXPECT_EQ(env.at("CLEANSWEEP_GPUS"), std::to_string(g));
      if (g == 1) {  // issue 36: size 1 gets torchrun's whole environment too, as torchrun gives it
        EXPECT_EQ(env.at("RANK"), "0");
        EXPECT_EQ(env.at("LOCAL_RANK"), "0");
        EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "1");
        EXPECT_EQ(env.at("GROUP_WORLD_SIZE"), "1");
        EXPECT_EQ(env.at("MASTER_ADDR"), "node" + std::to_string((r.worker - 1) / 4) + ".example");
        EXPECT_GT(std::stoi(env.at("MASTER_PORT")), 0);
      }
    }
    if (g == 8) {
      EXPECT_EQ(groups, (std::set<std::string>{"0", "1"})) << "8 processes on two nodes of 4";
      for (const auto& env : processes.at(r.number)) EXPECT_EQ(env.at("LOCAL_WORLD_SIZE"), "4");
    } else if (g > 1) {
      EXPECT_EQ(groups, (std::set<std::string>{"0"})) << "a gang that fits a node stays on it";
    }
  }
  EXPECT_EQ(sizes, (std::set<std::int64_t>{1, 2, 4, 8})) << "the seed should draw every size";
}

// Without trial.gpus a trial is an ordinary one: none of torch.distributed's variables. With
// `gpus: 1` written out, every trial gets them (WORLD_SIZE=1) and a port of its own worker.
TEST(CoordinatorGangs, TorchrunsEnvironmentComesWithTrialGpusOnly) {
  Sweep plain(Config("{name: p, n_trials: 4}", "{kind: random, seed: 1}"), 2);
  const SystemClock clock;
  ASSERT_TRUE(plain.Run(clock).ok());
  for (const auto& env : plain.launcher().envs()) {
    for (const char* name : {"RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "CLEANSWEEP_GPUS"}) {
      EXPECT_EQ(env.count(name), 0u) << name;
    }
  }
  Sweep one(GangConfig("gpus: 1", 4), 2);
  ASSERT_TRUE(one.Run(clock).ok());
  std::map<std::string, std::set<std::string>> ports;  // worker host -> ports its trials got
  ASSERT_EQ(one.launcher().envs().size(), 4u);
  for (const auto& env : one.launcher().envs()) {
    EXPECT_EQ(env.at("RANK"), "0");
    EXPECT_EQ(env.at("WORLD_SIZE"), "1");
    EXPECT_EQ(env.at("CLEANSWEEP_GPUS"), "1");
    ports[env.at("MASTER_ADDR")].insert(env.at("MASTER_PORT"));
  }
  for (const auto& [host, held] : ports) EXPECT_EQ(held.size(), 1u) << host << ": the port its worker holds";
}

TEST(CoordinatorGangs, OneFailingProcessStopsTheGangAndNamesItsRank) {
  Sweep sweep(GangConfig("gpus: 4", 2), 4, false, 4);
  sweep.launcher().steps = 50;
  sweep.launcher().crash_rank = 2;  // rank 2 crashes after one step; the others would wait forever
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  ASSERT_EQ(sweep.store()->trials().size(), 2u);
  for (const TrialRecord& r : sweep.store()->trials()) {
    EXPECT_EQ(r.state, TrialState::kCrash);
    EXPECT_EQ(r.signal, 11);
    EXPECT_NE(r.reason.find("rank 2 of 4 (worker 3 on node0) failed first: killed by signal 11"), std::string::npos)
        << r.reason;
    EXPECT_EQ(r.gpus, 4);
  }
  EXPECT_EQ(sweep.launcher().envs().size(), 8u) << "the second trial ran once the first gang's workers were free";
}

TEST(CoordinatorGangs, SingleModeStartsOneProcessThatSeesTheGangsGpus) {
  Sweep sweep(GangConfig("gpus: 2, processes: single", 4), 4, false, 4);
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->complete, 4);
  const auto processes = ProcessesByTrial(sweep.launcher());
  for (const auto& [number, envs] : processes) {
    ASSERT_EQ(envs.size(), 1u) << "one process per trial";
    const auto& env = envs.front();
    EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES").size(), 3u) << env.at("CUDA_VISIBLE_DEVICES");  // "0,1" or "2,3"
    EXPECT_EQ(env.at("CLEANSWEEP_GPUS"), "2");
    EXPECT_EQ(env.count("RANK"), 0u) << "torchrun inside it sets RANK";
    EXPECT_FALSE(env.at("MASTER_PORT").empty());
  }
  for (const TrialRecord& r : sweep.store()->trials()) {
    EXPECT_EQ(r.gpus, 2);
    EXPECT_EQ(r.gpu.size(), 3u);
  }
}

TEST(CoordinatorGangs, AGangLargerThanTheJobIsRefusedWithTheNumbers) {
  Sweep sweep(GangConfig("gpus: 6", 2), 4, false, 4);
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_FALSE(summary.ok());
  EXPECT_NE(summary.status().message().find("trial.gpus: 6 needs 6 workers for one trial; this job has 4 (start it "
                                            "with at least 7 ranks: mpirun -np 7"),
            std::string::npos)
      << summary.status().message();
  Sweep single(GangConfig("gpus: 4, processes: single", 2), 8, false, 2);
  summary = single.Run(clock);
  ASSERT_FALSE(summary.ok());
  EXPECT_NE(summary.status().message().find("needs 4 workers on one node; the largest node of this job has 2"),
            std::string::npos)
      << summary.status().message();
}

TEST(CoordinatorGangs, AStopLeavesWaitingTrialsInterruptedToRunOnResume) {
  StudyConfig config = GangConfig("gpus: 4", 6);
  config.trial.stop_grace = Millis(30);
  Sweep sweep(config, 6, /*hang=*/true, 4);  // node0: 4 workers, node1: 2
  int polls = 0;
  sweep.prepare = [&](Coordinator& c) {
    c.SetStopPoll([&] { return ++polls > 5 ? StopRequest{1, "SIGTERM"} : StopRequest{}; });
  };
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_TRUE(summary->interrupted);
  int running = 0, waited = 0;
  for (const TrialRecord& r : sweep.store()->trials()) {
    EXPECT_EQ(r.state, TrialState::kInterrupted) << r.reason;
    if (r.reason.find("while it waited for 4 free workers") != std::string::npos) {
      ++waited;
    } else {
      ++running;
    }
  }
  EXPECT_EQ(running, 1) << "one node of four: one gang at a time";
  EXPECT_GE(waited, 1) << "the next trial was drawn and waited (node1's two free workers cannot hold it)";
}

}  // namespace
}  // namespace cleansweep

namespace cleansweep {
namespace {

// A sibling source with fixed files: changed on the first read only.
class FixedSiblings : public SiblingSource {
 public:
  Scan Read() override {
    Scan scan;
    scan.changed = reads_++ == 0;
    scan.warnings = std::exchange(warnings, {});
    return scan;
  }
  const std::map<std::string, SiblingFile>& files() const override { return files_; }
  void Add(const std::string& path, bool live, std::vector<TrialRecord> trials) {
    files_[path] = SiblingFile{path, "1/2", live, std::move(trials)};
  }
  std::vector<std::string> warnings;

 private:
  int reads_ = 0;
  std::map<std::string, SiblingFile> files_;
};

TrialRecord SiblingTrial(std::int64_t number, TrialState state, double x) {
  TrialRecord r;
  r.number = number;
  r.state = state;
  r.params = {{"x", ParamValue(x)}, {"n", ParamValue(std::int64_t{1})}};
  if (state == TrialState::kComplete) r.value = FakeObjective(r.params);
  return r;
}

// Records what the coordinator gives the sampler: random proposals, the history seen at each ask.
class WatchingSampler : public Sampler {
 public:
  explicit WatchingSampler(const StudyConfig& config) : inner_(std::move(MakeSampler(config).value())) {}
  std::optional<ParamSet> Ask(std::int64_t number, const TrialHistory& history) override {
    finished_seen.push_back(history.finished.size());
    std::int64_t foreign = 0;
    for (const auto& [n, params] : history.running) foreign += n < 0 ? 1 : 0;
    foreign_running_seen.push_back(foreign);
    return inner_->Ask(number, history);
  }
  std::vector<size_t> finished_seen;
  std::vector<std::int64_t> foreign_running_seen;

 private:
  std::unique_ptr<Sampler> inner_;
};

// A sharing sweep with `sampler` watching what the coordinator gives it.
Result<RunSummary> RunSharing(Sweep* sweep, WatchingSampler* sampler, SiblingSource* siblings) {
  sweep->sampler_override = sampler;
  sweep->prepare = [siblings](Coordinator& c) { c.Share(siblings); };
  const SystemClock clock;
  return sweep->Run(clock);
}

// One search across shards: what a live sibling finished is history, what it runs is pending,
// and both count against the sweep's n_trials.
TEST(CoordinatorSharing, ASiblingsTrialsTeachTheSamplerAndCountAgainstTheSweepsBudget) {
  const StudyConfig config = Config("{name: s, n_trials: 20, shard: 0/2}", "{kind: tpe, seed: 2}");
  FixedSiblings siblings;
  std::vector<TrialRecord> trials;
  for (int i = 0; i < 12; ++i) trials.push_back(SiblingTrial(i, TrialState::kComplete, 0.05 * i));
  trials.push_back(SiblingTrial(12, TrialState::kFail, 0.7));
  trials.push_back(SiblingTrial(13, TrialState::kComplete, 0.8));  // a retry of 12: the chain counts once
  trials.back().retry_of = 12;
  for (int i = 14; i < 17; ++i) trials.push_back(SiblingTrial(i, TrialState::kRunning, 0.9));
  siblings.Add("/r/s-shard-1-of-2.h5", true, trials);
  WatchingSampler sampler(config);
  Sweep sweep(config, 2);
  const Result<RunSummary> summary = RunSharing(&sweep, &sampler, &siblings);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  // 12 + the chain of 12 and 13 + 3 running: 16 of 20 are the sibling's.
  EXPECT_EQ(sweep.store()->trials().size(), 4u);
  EXPECT_EQ(summary->sweep_trials, 20);
  ASSERT_FALSE(sampler.finished_seen.empty());
  EXPECT_GE(sampler.finished_seen.front(), 14u);  // every ended trial of the sibling, the failure too
  EXPECT_EQ(sampler.foreign_running_seen.front(), 3);
  EXPECT_NE(sweep.progress_text.find("sharing: 1 other files of the sweep (1 running), 14 trials finished there"),
            std::string::npos)
      << sweep.progress_text;
  EXPECT_TRUE(summary->stopped_early.empty()) << summary->stopped_early;  // the sweep's trials are all taken
}

// A killed shard's RUNNING rows run nowhere: they neither hold the budget nor pend for the sampler.
TEST(CoordinatorSharing, ADeadSiblingsRunningRowsAreNeitherPendingNorCounted) {
  const StudyConfig config = Config("{name: s, n_trials: 20, shard: 0/2}", "{kind: tpe, seed: 2}");
  FixedSiblings siblings;
  std::vector<TrialRecord> trials;
  for (int i = 0; i < 12; ++i) trials.push_back(SiblingTrial(i, TrialState::kComplete, 0.05 * i));
  for (int i = 12; i < 15; ++i) trials.push_back(SiblingTrial(i, TrialState::kRunning, 0.9));
  siblings.Add("/r/s-shard-1-of-2.h5", false, trials);
  WatchingSampler sampler(config);
  Sweep sweep(config, 2);
  const Result<RunSummary> summary = RunSharing(&sweep, &sampler, &siblings);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(sweep.store()->trials().size(), 8u);
  ASSERT_FALSE(sampler.foreign_running_seen.empty());
  EXPECT_EQ(sampler.foreign_running_seen.front(), 0);
}

// study.stop_when sees the whole sweep: a sibling that reached the target ends this shard too.
TEST(CoordinatorSharing, StopWhenJudgesTheWholeSweep) {
  const StudyConfig config =
      Config("{name: s, n_trials: 20, shard: 0/2, stop_when: {target: 10.2}}", "{kind: tpe, seed: 2}");
  FixedSiblings siblings;
  siblings.Add("/r/s-shard-1-of-2.h5", true, {SiblingTrial(3, TrialState::kComplete, 0.1)});  // 10.1
  Sweep sweep(config, 2);
  sweep.prepare = [&](Coordinator& c) { c.Share(&siblings); };
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_TRUE(sweep.store()->trials().empty());
  EXPECT_NE(summary->stopped_early.find("the target was reached: trial 3 of /r/s-shard-1-of-2.h5 has value = 10.1"),
            std::string::npos)
      << summary->stopped_early;
}

// Random, grid and sobol shards run an exact part of the list: sharing does not move it.
TEST(CoordinatorSharing, PositionalSamplersKeepTheirExactPart) {
  const StudyConfig config = Config("{name: s, n_trials: 20, shard: 0/2}", "{kind: random, seed: 2}");
  FixedSiblings siblings;
  siblings.Add("/r/s-shard-1-of-2.h5", true, {SiblingTrial(0, TrialState::kComplete, 0.1)});
  siblings.warnings = {"/r/s-shard-2.h5: still being created; skipped, this shard goes on without it"};
  Sweep sweep(config, 2);
  sweep.prepare = [&](Coordinator& c) { c.Share(&siblings); };
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(sweep.store()->trials().size(), 10u);
  EXPECT_NE(sweep.progress_text.find("warning: sharing: /r/s-shard-2.h5: still being created"), std::string::npos);
}

// The wall clock, and whatever the test adds to it.
class JumpingClock : public Clock {
 public:
  double Now() const override { return system_.Now() + offset; }
  mutable double offset = 0;

 private:
  SystemClock system_;
};

// Reads that take as long as `took` says (the first, then the rest), on the jumping clock.
class SlowSiblings : public FixedSiblings {
 public:
  SlowSiblings(JumpingClock* clock, std::vector<double> took) : clock_(clock), took_(std::move(took)) {}
  Scan Read() override {
    read_at.push_back(clock_->Now());
    clock_->offset += took_[std::min(read_at.size() - 1, took_.size() - 1)];
    return FixedSiblings::Read();
  }
  std::vector<double> read_at;  // when each read began

 private:
  JumpingClock* clock_;
  std::vector<double> took_;
};

// A sampler whose every ask lets `step` seconds pass: time for the next read.
class PassingTimeSampler : public WatchingSampler {
 public:
  PassingTimeSampler(const StudyConfig& config, JumpingClock* clock, double step)
      : WatchingSampler(config), clock_(clock), step_(step) {}
  std::optional<ParamSet> Ask(std::int64_t number, const TrialHistory& history) override {
    clock_->offset += step_;
    return WatchingSampler::Ask(number, history);
  }

 private:
  JumpingClock* clock_;
  double step_;
};

// A slow file system: a read that takes more than a tenth of share_every spaces the next ones out
// to ten times its length, with one warning; once reads are fast again, share_every holds again.
TEST(CoordinatorSharing, SlowReadsOfTheSiblingsAreSpacedOutUntilTheyAreFastAgain) {
  const StudyConfig config = Config("{name: s, n_trials: 12, shard: 0/2, share_every: 100ms}", "{kind: tpe, seed: 2}");
  JumpingClock clock;
  SlowSiblings siblings(&clock, {100.0, 0.0});  // the first read takes 100 s, the others nothing
  siblings.Add("/r/s-shard-1-of-2.h5", true, {SiblingTrial(0, TrialState::kComplete, 0.1)});
  PassingTimeSampler sampler(config, &clock, 400.0);  // the third ask is past the 1,000 s
  Sweep sweep(config, 1);
  sweep.sampler_override = &sampler;
  sweep.prepare = [&](Coordinator& c) { c.Share(&siblings); };
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_NE(sweep.progress_text.find("warning: sharing: reading the sweep's other files took 1m40s, more than a "
                                     "tenth of study.share_every (100ms): reading them every 16m40s instead"),
            std::string::npos)
      << sweep.progress_text;
  // Asks 400 s apart: the second read waits out the 1,000 s; then a read before each ask again.
  ASSERT_GE(siblings.read_at.size(), 3u);
  EXPECT_GE(siblings.read_at[1] - (siblings.read_at[0] + 100), 1000.0);
  EXPECT_LT(siblings.read_at[2] - siblings.read_at[1], 401.0);
  EXPECT_NE(sweep.progress_text.find("sharing: reading the sweep's other files is fast again: every 100ms"),
            std::string::npos)
      << sweep.progress_text;
}

// study.warm_start: earlier trials are the sampler's history, never this study's rows or budget.
TEST(CoordinatorSharing, WarmStartTrialsAreHistoryOnly) {
  const StudyConfig config = Config("{name: s, n_trials: 6}", "{kind: tpe, seed: 2}");
  WarmStartFile earlier;
  earlier.path = "old.h5";
  for (int i = 0; i < 9; ++i) earlier.used.push_back(SiblingTrial(i, TrialState::kComplete, 0.1 * i));
  WatchingSampler sampler(config);
  Sweep sweep(config, 1);
  sweep.sampler_override = &sampler;
  sweep.prepare = [&](Coordinator& c) { c.WarmStart({earlier}); };
  const SystemClock clock;
  Result<RunSummary> summary = sweep.Run(clock);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(sweep.store()->trials().size(), 6u);
  ASSERT_EQ(sampler.finished_seen.size(), 6u);
  EXPECT_EQ(sampler.finished_seen.front(), 9u);
  EXPECT_NE(sweep.progress_text.find("warm start: the sampler starts from 9 trials"), std::string::npos);
}

}  // namespace
}  // namespace cleansweep
