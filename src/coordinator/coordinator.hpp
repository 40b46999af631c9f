// The scheduling loop on rank 0: sets the workers up, hands each free worker the next trial at once
// (dynamic dispatch), records every result as it arrives and stops at n_trials or the time budget.
// It talks only to interfaces (Transport, Sampler, StudyStore, Clock), so tests drive it with no
// MPI, no HDF5 file and no processes; it never starts a process itself.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "coordinator/gang_planner.hpp"
#include "coordinator/progress.hpp"
#include "coordinator/rank_queue.hpp"
#include "coordinator/trial_ledger.hpp"
#include "pruners/pruner.hpp"
#include "samplers/sampler.hpp"
#include "study/siblings.hpp"
#include "study/study_store.hpp"
#include "transport/transport.hpp"
#include "util/clock.hpp"

namespace cleansweep {

struct CoordinatorTiming {
  Millis tick = Millis(1000);              // progress redraw and time-budget check interval
  Millis setup_timeout = Millis(300'000);  // a worker silent for this long during set-up is lost
  Millis watchdog = Millis(5000);          // a turn of the loop longer than this is reported (0: never)
};

struct RunSummary {
  std::int64_t finished = 0;  // trials whose outcome is final (not interrupted, no retry to come)
  std::int64_t complete = 0;
  std::int64_t pruned = 0;                // stopped by the pruner: not a failure
  std::optional<TrialRecord> best;        // a single-metric study's
  std::vector<TrialRecord> pareto_front;  // a multi-metric study's
  bool budget_reached = false;
  bool interrupted = false;         // a stop request ended the run early; `cleansweep resume` continues it
  std::string stopped_early;        // why the sweep ended before n_trials unstopped (stop_when, PBT, grid); "" if not
  std::string worker_fault;         // set when a worker could not start trials, which stopped the sweep
  std::vector<double> commit_ms;    // how long each group commit (one flush of the store) took
  std::int64_t committed_rows = 0;  // trial rows those commits made durable
  // For each request for a parameter rank 0 answered (a value, or a refusal): from its arrival
  // to the answer's send (drawing, recording, the group commit), in milliseconds.
  std::vector<double> suggest_ms;
  // Sharing (study.share_every): the sweep's trials this shard knew of at the end, its own
  // included (finished, running in live siblings); -1 when it did not share.
  std::int64_t sweep_trials = -1;
  std::vector<double> share_ms;  // how long each read of the sibling files took
};

// Asked from outside (signal handlers) while Run() is going: 1 = stop gracefully, 2 = stop now.
struct StopRequest {
  int level = 0;
  std::string reason;
};
using StopPoll = std::function<StopRequest()>;

class Coordinator {
 public:
  using StoreOpener = std::function<Result<std::unique_ptr<StudyStore>>()>;

  // All pointers must outlive the coordinator.
  Coordinator(const StudyConfig& config, Transport* transport, Sampler* sampler, const Clock* clock, Progress* progress,
              CoordinatorTiming timing = {});

  // Continues a study: `trials` and `intermediate` are what its file holds. Finished trials go to
  // the sampler and the pruner; RUNNING ones (the last run was killed) are recorded INTERRUPTED
  // when the store opens, and they, earlier interrupted trials and pending retries run again.
  void Resume(std::vector<TrialRecord> trials, const std::vector<IntermediateValue>& intermediate);

  // Sharing (study.share_every): reads `siblings` before the first trial and every share_every;
  // their finished trials become the sampler's history, their running ones its pending trials,
  // and study.stop_when judges the whole sweep. With a model-based sampler their trials also count
  // against study.n_trials, which then is the sweep's (the shard stops when the trials it knows
  // of reach it); random, grid and sobol keep their exact part of the trial list. Must outlive Run().
  void Share(SiblingSource* siblings);

  // study.warm_start: the earlier studies' trials, given to the sampler before any other. They
  // are history only: no row of this study, not counted against n_trials or by stop_when.
  void WarmStart(const std::vector<WarmStartFile>& files);

  // Checked every tick while the study runs (the CLI turns signals into requests).
  void SetStopPoll(StopPoll poll) { stop_poll_ = std::move(poll); }

  // Runs the whole study. `open_store` is called once every worker has set up, so a config that a
  // worker rejects leaves no file behind. Every worker gets a Stop before this returns, on success
  // and on error alike.
  Result<RunSummary> Run(const StoreOpener& open_store, const std::string& trials_root);

  // After Run() failed: whether every worker's running trial was killed and its last result
  // received, so that no worker is left blocked sending to rank 0 and the job can end in order.
  // False when a worker did not answer within trial.kill_grace + 10 s or the transport failed;
  // only aborting the job ends it then. True after a successful Run().
  bool WorkersSettled() const { return workers_settled_; }

 private:
  struct WorkerSlot {
    bool present = false;
    std::string host;
    std::string gpu;
    std::string address;  // MASTER_ADDR and MASTER_PORT of the gang trials it leads
    int port = 0;
    // Its trials in the order it runs them: the first runs, the others wait on the worker
    // (workers.queue). Empty when it is idle.
    std::deque<std::int64_t> trials;
    size_t handed_out = 0;  // how many of them were sent (the others wait for the turn's flush)
  };

  Status SetUpWorkers(const std::string& trials_root);
  Status RecordPrior();
  Status StageRow(const TrialRecord& record);  // PutTrial into the open group commit
  // Rewrites the rows of trials that joined or left the Pareto front (their pareto column), in the
  // same group commit.
  Status WriteFrontChanges();
  // Ends the turn's group commit: one flush makes every row written since the last durable, then
  // the assignments and progress lines that waited on them go out.
  Status CommitTurn();
  Status CheckStopRequest();
  Result<Envelope> ReceiveOrFail(Millis max_wait, const char* waiting_for);
  Status Dispatch();
  // The next trial to run: a rerun, a promotion, or fresh parameters (from `batch` while it has
  // some); false when the sampler has none left.
  Result<bool> NextTrial(TrialRecord* running, std::deque<ParamSet>* batch, double batch_ms_each);
  // Starts `running` on `ranks` (one, or a gang's): RUNNING in the file, sent after the flush.
  Status Launch(TrialRecord running, const std::vector<int>& ranks);
  // Gangs (trial.gpus): trials wait in order until enough workers are free (GangPlanner).
  Status DispatchGangs();
  Status PlaceWaiting();
  // The study stops with trials still waiting for workers: they are INTERRUPTED, never started.
  Status SettleWaiting();
  // Refuses a gang larger than the job's workers or, for processes: single, than a node.
  Status CheckGangsFit() const;
  // A gang process ended: the rest are stopped if it failed (or was rank 0); once all ended, the
  // trial's one record. nullopt while some still run.
  Result<std::optional<TrialRecord>> GangMemberEnded(int source, TrialRecord record);
  // Frees `source` of its first trial, `number`.
  Status FreeWorker(int source, std::int64_t number, bool check_sent);
  // Sends to every worker running a process of trial `number` (just `source` for an ordinary trial).
  Status SendToTrial(std::int64_t number, int source, const Message& message);
  // How many trials a busy worker may hold besides its running one, now (workers.queue).
  int QueueDepth() const;
  size_t QueueLimit() const;  // the most QueueDepth() can be: whether a busy worker may ever queue
  size_t FreeSlots() const;   // trials Dispatch() could hand out now
  int TakeFreeRank();         // the worker the next trial goes to: an idle one first
  void NoteDuration(const TrialRecord& record);
  Status Handle(const Envelope& envelope);
  // Why a sweep that nobody stopped ended short of its trials (PBT's population ran out, a grid
  // smaller than n_trials, a sampler with nothing left to propose); "" when it did not.
  std::string EndedShort() const;
  // What handling `envelope` does, for the loop watchdog's line.
  std::string Describe(const Envelope& envelope) const;
  Status RecordResult(int source, TrialRecord record);
  // Checks study.stop_when against the ledger; once met, says why, here and in the study file.
  Status CheckStopWhen();
  Status RecordReport(int source, const IntermediateValue& value);
  // The running trial declared a checkpoint: its RUNNING row says so at once, so that a job killed
  // from now on continues it from there.
  Status RecordCheckpoint(int source, const CheckpointMsg& checkpoint);
  // Define-by-run: trial `ask.number` asks for a parameter the config does not declare. Its value
  // (the one it already has, one its earlier run had, or the sampler's) is recorded in /params;
  // the answer goes out after the turn's flush, so what a trial was told is durable.
  Status HandleSuggest(int source, const SuggestMsg& ask);
  // The parameters of `params` that the config declares: what a worker's AssignMsg carries.
  ParamSet Declared(const ParamSet& params) const;
  // The row a trial that goes on from its checkpoint starts its next attempt with.
  TrialRecord ContinuationOf(const TrialRecord& interrupted, int attempt);
  // Sends `stop` to every worker, also past one that cannot be reached; the first failure.
  Status StopAll(const StopMsg& stop);
  // The end of a failed run: kills the trials out on workers and waits for their last results.
  void WindDown();
  // pruner.resume: the paused trial to continue next, if any may be (cached until curves change).
  // Promotable() whatever a stop request says; NextPromotion() none once stopping.
  const std::optional<Promotion>& Promotable() const;
  std::optional<Promotion> NextPromotion() const;
  // The study is over with trials still paused at rungs: they end PRUNED, in this turn's commit.
  Status SettlePaused();
  // Population-based training: the paused member `promotion` names ends, and a new trial starts
  // in `running` from its parent's checkpoint.
  Status Replace(const Promotion& promotion, TrialRecord* running);
  // Checkpoints of `trial` that may go: those before `before`, but none a starting trial still
  // has to link (population-based training pins its parent's checkpoint until it runs).
  std::int64_t ReleaseBound(std::int64_t trial, std::int64_t before) const;
  void Unpin(std::int64_t child);  // `child` has started: it no longer needs its parent's checkpoint
  bool MoreToLaunch() const;
  bool MoreFresh() const;
  // This shard's trials out on workers (history_.running also holds the siblings' running ones).
  std::int64_t OwnRunning() const;
  // Trials that count against n_trials: this shard's final, running, paused and to run again,
  // and with a shared budget the siblings'.
  std::int64_t Taken() const;
  // Sharing: reads the sibling files again and brings history_, the sweep's ledger and the
  // budget up to date; warnings and what changed go to the progress output.
  Status ReadSiblings();
  void PaceSharing(double took);  // the next reads' interval, after one that took `took` seconds
  // The number a trial of another file (a sibling, a warm-start study) has in history_: negative,
  // so that it never meets one of this study's; one per (file, trial).
  std::int64_t ForeignNumber(const std::string& source, std::int64_t number);
  // "trial 12" for this study's trials, "trial 12 of PATH" for a sibling's.
  std::string TrialName(std::int64_t number) const;
  // The ledger stop_when judges: the sweep's when sharing, else this study's.
  const TrialLedger& Judged() const { return siblings_ ? sweep_ledger_ : ledger_; }
  bool Room() const;       // the study may take one more trial (n_trials counts every trial)
  bool FreshLeft() const;  // trials not yet started that the study still wants, a stop request aside
  // Trials running, to rerun or not yet started, a stop request aside: false once the study is done.
  bool WorkLeft() const;
  bool BudgetReached() const;
  Millis UntilBudget() const;  // Millis::max() without a time budget
  ProgressState State() const;

  const StudyConfig& config_;
  Transport* transport_;
  Sampler* sampler_;
  const Clock* clock_;
  Progress* progress_;
  CoordinatorTiming timing_;
  std::unique_ptr<StudyStore> store_;
  std::vector<WorkerSlot> workers_;  // by rank; [0] unused
  RankQueue idle_;                   // present workers without a trial, longest idle first
  RankQueue queueable_;              // busy workers with room in their queue, the one that waited longest first
  std::int64_t queued_ = 0;          // trials waiting on a busy worker (handed out or about to be), not running
  // workers.queue: auto: how long the last trials ran, how many have been seen, and the verdict.
  std::deque<double> recent_seconds_;
  std::int64_t durations_noted_ = 0;
  std::int64_t present_workers_ = 0;
  bool short_trials_ = false;
  TrialHistory history_;
  TrialLedger ledger_{config_, &history_};       // ended trials: counts, best, reruns; evidence into history_
  std::map<std::int64_t, TrialRecord> running_;  // the RUNNING rows of trials out on workers
  std::map<std::int64_t, int> failures_;         // running reruns: failures in their chain so far
  std::vector<TrialRecord> prior_;               // the file's trials, when resuming
  StopPoll stop_poll_;
  int stop_level_ = 0;
  std::int64_t finished_before_ = 0;            // finished in earlier runs, when resuming
  std::unique_ptr<Pruner> pruner_;              // null without `pruner:`
  Curves curves_;                               // every trial's intermediate values
  std::set<std::int64_t> prune_sent_;           // running trials already told to stop
  std::set<std::int64_t> pausing_;              // ... of which told to pause (pruner.resume)
  mutable std::optional<Promotion> promotion_;  // Promotable(), while promotion_stale_ is false
  mutable bool promotion_stale_ = true;
  // Population-based training: each trial's parameters and generation, for its children; and the
  // parents' checkpoints pinned for children that have not started yet (parent -> child -> step).
  std::map<std::int64_t, std::pair<ParamSet, std::int64_t>> lineage_;
  std::map<std::int64_t, std::map<std::int64_t, std::int64_t>> pins_;
  std::map<std::int64_t, std::int64_t> pinned_parent_;  // child -> parent
  std::int64_t fresh_limit_ = 0;                        // fresh trials the sampler draws at most
  std::int64_t next_number_ = 0;
  std::int64_t fresh_ = 0;   // trials with sampler-chosen (or enqueued) parameters so far
  std::int64_t target_ = 0;  // n_trials (this shard's part of it), or fewer when the sampler's capacity is smaller
  bool sampler_exhausted_ = false;
  std::string stop_when_reason_;  // set once study.stop_when is met: no new trials from then on
  bool stopping_ = false;
  bool workers_settled_ = true;  // false from a failure until WindDown() has heard every worker
  double started_ = 0;
  RunSummary summary_;
  // Waiting for the turn's flush: assignments to send and finished trials to print.
  struct PendingAssign {
    int rank;
    AssignMsg message;
  };
  struct PendingProgress {
    TrialRecord record;
    ProgressState state;
    std::string message;  // a retry notice, or empty
  };
  std::vector<PendingAssign> pending_assigns_;
  // Checkpoints the turn's flush makes safe to remove (trial.checkpoint_keep), by worker rank.
  std::vector<std::pair<int, ReleaseMsg>> pending_releases_;
  struct PendingReply {  // the answer to a suggest request, sent once its value is durable
    int rank = -1;
    SuggestReplyMsg reply;
    std::chrono::steady_clock::time_point received;
  };
  std::vector<PendingReply> pending_replies_;
  // Until then (clock_ seconds; -1: not) the transport looks for messages often: a trial asked
  // for a parameter lately, and its next request, or another trial's, is likely soon.
  static constexpr double kResponsiveSeconds = 1.0;
  double responsive_until_ = -1;
  // Define-by-run: what each ended trial of this study asked for (name -> distribution), so that
  // a re-run gets the values its predecessor was given.
  std::map<std::int64_t, std::map<std::string, std::string>> defined_;
  std::vector<PendingProgress> pending_progress_;
  std::int64_t uncommitted_rows_ = 0;
  // Gangs (docs/multi-gpu.md).
  struct Gang {
    std::vector<int> ranks;            // every worker it holds, its rank 0's first
    bool single = false;               // one process, on ranks[0]; the others are held for it
    std::map<int, TrialRecord> ended;  // its processes' results so far, by worker rank
    bool aborted = false;              // the rest were told to stop
  };
  std::map<std::int64_t, Gang> gangs_;    // running gang trials
  std::deque<TrialRecord> waiting_;       // drawn, waiting for workers, oldest first
  std::unique_ptr<GangPlanner> planner_;  // null without gangs
  // Sharing (Share()) and warm starts (WarmStart()).
  SiblingSource* siblings_ = nullptr;
  bool shared_budget_ = false;  // the siblings' trials count against n_trials (model-based samplers)
  double next_share_ = 0;       // when to read the siblings next (clock time)
  double share_interval_ = 0;   // seconds between two reads: share_every, longer while reads are slow
  double share_warned_ = 0;     // the interval the last warning about slow reads named
  std::map<std::string, std::int64_t> source_ids_;  // file -> its block of ForeignNumber()s
  std::map<std::int64_t, std::string> foreign_names_;
  std::set<std::int64_t> shared_seen_;                 // sibling trials given to history_.finished
  std::vector<std::int64_t> shared_running_;           // sibling trials in history_.running now
  std::int64_t shared_taken_ = 0;                      // sibling trials that count against n_trials
  std::int64_t shared_files_ = -1, shared_live_ = -1;  // as last reported
  std::int64_t warm_trials_ = 0;
  TrialHistory sweep_history_;
  TrialLedger sweep_ledger_{config_, &sweep_history_};  // this study's and the siblings' outcomes
};

}  // namespace cleansweep
