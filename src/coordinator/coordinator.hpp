// The scheduling loop on rank 0: sets the workers up, hands each free worker the next trial at once
// (dynamic dispatch), records every result as it arrives and stops at n_trials or the time budget.
// It talks only to interfaces (Transport, Sampler, StudyStore, Clock), so tests drive it with no
// MPI, no HDF5 file and no processes; it never starts a process itself.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "coordinator/progress.hpp"
#include "pruners/pruner.hpp"
#include "samplers/sampler.hpp"
#include "study/study_store.hpp"
#include "transport/transport.hpp"
#include "util/clock.hpp"

namespace cleansweep {

struct CoordinatorTiming {
  Millis tick = Millis(1000);              // progress redraw and time-budget check interval
  Millis setup_timeout = Millis(300'000);  // a worker silent for this long during set-up is lost
};

struct RunSummary {
  std::int64_t finished = 0;
  std::int64_t complete = 0;
  std::optional<TrialRecord> best;
  bool budget_reached = false;
};

class Coordinator {
 public:
  using StoreOpener = std::function<Result<std::unique_ptr<StudyStore>>()>;

  // All pointers must outlive the coordinator.
  Coordinator(const StudyConfig& config, Transport* transport, Sampler* sampler, const Clock* clock, Progress* progress,
              CoordinatorTiming timing = {});

  // Runs the whole study. `open_store` is called once every worker has set up, so a config that a
  // worker rejects leaves no file behind. Every worker gets a Stop before this returns, on success
  // and on error alike.
  Result<RunSummary> Run(const StoreOpener& open_store, const std::string& trials_root);

 private:
  struct WorkerSlot {
    bool present = false;
    std::string host;
    std::string gpu;
    std::int64_t trial = -1;  // running trial, -1 when idle
  };

  Status SetUpWorkers(const std::string& trials_root);
  Result<Envelope> ReceiveOrFail(Millis max_wait, const char* waiting_for);
  Status Dispatch();
  Status Handle(const Envelope& envelope);
  Status RecordResult(int source, TrialRecord record);
  Status RecordReport(int source, const IntermediateValue& value);
  void StopAll(const std::string& reason);
  bool MoreToLaunch() const;
  bool BudgetReached() const;
  ProgressState State() const;

  const StudyConfig& config_;
  Transport* transport_;
  Sampler* sampler_;
  const Clock* clock_;
  Progress* progress_;
  CoordinatorTiming timing_;
  std::unique_ptr<StudyStore> store_;
  std::vector<WorkerSlot> workers_;  // by rank; [0] unused
  TrialHistory history_;
  struct Dispatched {
    bool enqueued;
    double sampler_ms;
  };
  std::map<std::int64_t, Dispatched> dispatched_;  // running trials: how their parameters were chosen
  std::unique_ptr<Pruner> pruner_;                 // null without `pruner:`
  Curves curves_;                                  // every trial's intermediate values
  std::set<std::int64_t> prune_sent_;              // running trials already told to stop
  size_t next_enqueued_ = 0;
  std::int64_t next_number_ = 0;
  std::int64_t target_ = 0;  // n_trials, or fewer when the sampler's capacity is smaller
  bool sampler_exhausted_ = false;
  bool stopping_ = false;
  double started_ = 0;
  RunSummary summary_;
};

}  // namespace cleansweep
