// TrialLedger: the coordinator's account of the trials that ended, kept the same way whether a
// result has just come from a worker or a resumed study's file holds it: which outcomes are final
// (the counts and the best trial), which trials run again (interrupted ones, and failures that
// trial.retry_on and trial.retries allow another attempt), and the evidence the sampler learns
// from (every ended trial but an interrupted one, without its output).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "config/study_config.hpp"
#include "trial/trial_record.hpp"

namespace cleansweep {

class TrialLedger {
 public:
  // A trial to run again with the parameters of an earlier one: under a new number from the start,
  // or (`continues`: an interrupted trial that declared a checkpoint) under its own number from
  // that checkpoint (docs/checkpoints.md).
  struct Rerun {
    std::int64_t of = -1;
    ParamSet params;
    int attempt = 2;
    int failures = 0;  // retry_on failures in its chain so far; interruptions do not count
    bool enqueued = false;
    std::optional<TrialRecord> continues;  // the interrupted attempt's row, when it goes on from it
  };

  enum class Fate {
    kFinal,        // its outcome stands
    kRetry,        // a retry_on failure with retries left: it runs again
    kInterrupted,  // cut off, not evidence: it runs again
    kPaused,       // at rest at a rung (pruner.resume): evidence, but not final; a promotion continues it
  };
  struct Settled {
    Fate fate = Fate::kFinal;
    int failures = 0;  // retry_on failures in its chain, itself included
  };

  // Both must outlive the ledger. Ended trials that are evidence go to `history->finished`.
  TrialLedger(const StudyConfig& config, TrialHistory* history) : config_(config), history_(history) {}

  // Accounts for a trial that ended. `failures_before`: retry_on failures in its chain before it.
  // One that runs again is queued, unless `queue_rerun` is false (the study's file already holds
  // its next attempt).
  Settled Settle(const TrialRecord& record, int failures_before, bool queue_rerun = true);

  bool HasRerun() const { return !reruns_.empty(); }
  // Paused trials (history->paused): a promotion takes one out to run again, the end of the study
  // settles the rest as pruned.
  std::int64_t paused_count() const { return static_cast<std::int64_t>(history_->paused.size()); }
  TrialRecord TakePaused(std::int64_t number);  // must be paused
  std::int64_t rerun_count() const { return static_cast<std::int64_t>(reruns_.size()); }
  Rerun TakeRerun();  // the oldest; HasRerun() must hold

  std::int64_t finished() const { return finished_; }  // final outcomes
  std::int64_t complete() const { return complete_; }
  std::int64_t infeasible() const { return infeasible_; }  // COMPLETE outside study.constraints
  std::int64_t pruned() const { return pruned_; }
  // A single-metric study's best COMPLETE trial within study.constraints; none in a multi-metric
  // study (see pareto_front, which also holds feasible trials only).
  const std::optional<TrialRecord>& best() const { return best_; }
  // Final outcomes since the last improvement (all of them while there is none): what
  // study.stop_when.no_improvement counts. One metric: a new best. Several: a trial that joined the
  // Pareto front without an equal already on it, which is what raises the front's hypervolume.
  std::int64_t since_best() const { return since_best_; }
  // A multi-metric study's Pareto front: its COMPLETE trials that no other dominates, in the order
  // they joined, each with pareto set.
  const std::vector<TrialRecord>& pareto_front() const { return front_; }
  // Trials whose place on the front changed since the last call, with pareto as it is now: their
  // rows must be written again (docs/study-format.md keeps the column current).
  std::vector<TrialRecord> TakeFrontChanges();

 private:
  const StudyConfig& config_;
  TrialHistory* history_;
  std::deque<Rerun> reruns_;  // run before new trials, oldest first
  std::int64_t finished_ = 0;
  std::int64_t complete_ = 0;
  std::int64_t pruned_ = 0;
  std::int64_t infeasible_ = 0;
  // A COMPLETE trial of a multi-metric study: updates the front; true when it improved it.
  bool AddToFront(const TrialRecord& record);
  // A trial that is not on the front but whose row says so (a resumed study): rewrite it.
  void ClearStaleFlag(const TrialRecord& record);

  std::optional<TrialRecord> best_;
  std::int64_t since_best_ = 0;
  std::vector<TrialRecord> front_;
  std::map<std::int64_t, TrialRecord> front_changes_;
};

}  // namespace cleansweep
