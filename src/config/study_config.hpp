// StudyConfig: everything a YAML config says, validated. Each options struct maps 1:1 onto one
// top-level section of the config; defaults here are the documented defaults.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "config/shard.hpp"
#include "space/search_space.hpp"
#include "trial/trial_record.hpp"
#include "util/duration.hpp"

namespace cleansweep {

enum class Direction { kMinimize, kMaximize };
const char* DirectionName(Direction direction);

// study.stop_when: end a sweep before n_trials once it no longer improves or is good enough. No new
// trials start then; those already running finish and are recorded (docs/samplers.md).
struct StopWhen {
  std::optional<std::int64_t> no_improvement;  // this many trials ended in a row without a new best
  std::optional<double> target;                // a COMPLETE trial's value reached it (>= or <= by direction)
};

// One objective of the study (study.metrics, or the single metric/direction).
struct Metric {
  std::string name;
  Direction direction = Direction::kMinimize;
};

// Figures every trial records that a study may also use as metrics (docs/samplers.md,
// "Several metrics"): the trial does not report them; its worker fills them in.
inline constexpr const char* kRecordedMetrics[] = {"trial_seconds", "cpu_seconds", "gpu_seconds",
                                                   "energy_j",      "peak_rss_mb", "gpu_mem_peak_mb"};
bool IsRecordedMetric(const std::string& name);
// The recorded figure `name` of `record` (IsRecordedMetric(name) must hold); NaN where unknown.
double RecordedFigure(const std::string& name, const TrialRecord& record);

// study.constraints: a bound on a metric or a recorded figure. A COMPLETE trial outside one is
// infeasible: stored and shown, but never the best nor on the Pareto front (docs/samplers.md).
struct Constraint {
  std::string name;
  std::optional<double> min;
  std::optional<double> max;
};

struct StudyOptions {  // study:
  std::string name;
  // The objectives, in order; never empty. The first is the one pruning, `show`'s ranking of a
  // single-metric study and the progress line use; `direction` and `metric` mirror it.
  std::vector<Metric> metrics = {Metric{"value", Direction::kMinimize}};
  Direction direction = Direction::kMinimize;
  std::string metric = "value";  // what the objective is called in output
  std::int64_t n_trials = 100;
  std::optional<Millis> time_budget;  // stop handing out trials after this long
  StopWhen stop_when;
  std::string storage;                 // HDF5 study file; default results/<name>.h5
  Shard shard;                         // this run's part of the sweep (--shard K/N); storage gets "-shard-K-of-N"
  std::optional<Millis> report_every;  // rewrite the HTML report (<storage>.html) this often during a run
  std::string trials_dir;              // where NAME.trials/ goes; empty: beside the study file
  // How often the coordinator of a sweep's study file reads the other files of its sweep (shards,
  // joined shards: study/siblings.hpp); 0 never does, and each shard is a search of its own.
  Millis share_every = Millis(30'000);
  // Earlier study files whose finished trials the sampler starts from (history, not trials of
  // this study); paths as given, relative to the working folder like study.storage.
  std::vector<std::string> warm_start;

  std::vector<Constraint> constraints;

  bool multi_objective() const { return metrics.size() > 1; }
  // How far a COMPLETE trial lies outside the constraints: the sum over them of the distance past
  // each bound, relative to the bound's size (|bound|, at least 1); 0 when it meets them all, and
  // NaN without constraints or for another state. A figure the trial lacks counts as 1.
  double Violation(const TrialRecord& record) const;
  // The value constraint `c` bounds, of a trial: its metric's, or the recorded figure; NaN if unknown.
  double ConstrainedValue(const Constraint& c, const TrialRecord& record) const;
  // The metrics the trial itself reports, in order (all but the recorded figures).
  std::vector<std::string> ReportedMetrics() const;
  // "maximize val_accuracy, minimize latency_ms": the metrics as `show` and `validate` name them.
  std::string DescribeMetrics() const;
  // A multi-metric study's COMPLETE trial gets every metric's value in `record->values`, in study
  // order: `reported` (in ReportedMetrics() order) and the recorded figures. One whose figure is
  // unknown (energy without NVML) becomes FAIL, naming it. Single-metric studies keep `value` only.
  void FillValues(const std::vector<double>& reported, TrialRecord* record) const;
};

// The folder that holds the study's trial folders (<root>/<number>/), absolute:
// <trials_dir or the study file's folder>/<study file name without .h5>.trials.
std::string TrialsRoot(const StudyOptions& study);

struct SamplerOptions {       // sampler:
  std::string kind = "auto";  // auto | random | grid | tpe | gp | sobol | cmaes | nsga2 | pbt
  // Why this kind: empty when the config names it; "auto: ..." when kind: auto (the default) chose
  // it (config/sampler_choice.hpp). A loaded config never holds kind "auto": it is resolved.
  std::string reason;
  std::uint64_t seed = 0;
  // tpe (docs/samplers.md compares each default with Optuna's)
  int n_startup_trials = 10;  // tpe, cmaes: random trials before the model takes over
  int n_ei_candidates = 24;
  double gamma = 0.10;  // fraction of scored trials that count as good...
  int gamma_max = 25;   // ...but never more than this many
  double prior_weight = 1.0;
  bool multivariate = true;   // joint density over the always-active parameters
  bool constant_liar = true;  // running trials count as not good
  // gp (docs/samplers.md): n_startup_trials Sobol points first, then
  int n_candidates = 512;          // quasi-random points the acquisition is swept over per ask
  int n_local_searches = 4;        // of the best of them, refined by gradient steps
  std::int64_t max_points = 1000;  // trials the model keeps at most (the best half, the most recent)
  bool deterministic = false;      // the objective has no noise: the model's noise stays at its floor
  bool fantasize = true;           // running trials join the model as fantasies (docs/samplers.md)
  // Set by MakeSampler, never read from a config: the gp's first trials are points
  // design_offset + design_stride * number of one scrambled Sobol' sequence of design_seed, so
  // that the shards K/N of a sweep between them draw one design (the sweep's seed, every N-th
  // point from K) rather than N unrelated ones.
  std::uint64_t design_seed = 0;
  std::uint64_t design_offset = 0, design_stride = 1;
  // sobol
  bool scramble = true;
  // cmaes
  double sigma0 = 0.25;  // initial step size, as a fraction of each parameter's range
  int popsize = 0;       // 0: 4 + floor(3 ln n)
  // nsga2 (docs/samplers.md)
  int population_size = 50;     // parents kept, and the random trials before evolution starts
  double crossover_prob = 0.9;  // a child is a crossover of two parents (else a copy of one)
  double swapping_prob = 0.5;   // uniform crossover: each parameter from the second parent
  double mutation_prob = 0;     // per parameter; 0: 1 / (number of parameters)
  // pbt: population-based training (docs/samplers.md)
  std::int64_t population = 8;               // members trained at once, the first ones drawn at random
  std::int64_t interval = 0;                 // steps between a member's checks (required)
  double quantile = 0.25;                    // bottom fraction replaced from the top fraction
  std::vector<double> perturb = {0.8, 1.2};  // a numeric parameter is multiplied by one of these
  double resample_probability = 0.25;        // ... or, with this probability, drawn afresh
};

struct PrunerOptions {        // pruner: (docs/pruners.md)
  std::string kind = "none";  // none | median | asha | hyperband
  // median
  std::int64_t n_startup_trials = 5;  // completed trials before it prunes anything
  std::int64_t n_warmup_steps = 0;    // no pruning before this step
  std::int64_t interval_steps = 1;    // decide every this many steps
  std::int64_t n_min_trials = 1;      // values needed at a step to compare against
  // asha, hyperband
  std::int64_t min_resource = 1;    // step of the first rung
  std::int64_t max_resource = 0;    // last step a trial reports (hyperband: required)
  int reduction_factor = 0;         // 0: Optuna's defaults, 4 for asha and 3 for hyperband
  int min_early_stopping_rate = 0;  // asha: skip this many rungs
  // asha, hyperband: a trial not (yet) good enough at a rung pauses there instead of being pruned,
  // and a promotion continues it from its checkpoint (docs/pruners.md, docs/checkpoints.md).
  bool resume = false;
};

// How a worker starts trials: exec each one (any program), or fork each from a fork server that
// loaded the trial code once as a plugin (docs/fork-server.md).
enum class LauncherKind { kSpawn, kForkServer };

enum class CheckpointKeep { kLast, kAll, kNone };

enum class GangProcesses { kPerGpu, kSingle };

struct TrialOptions {                // trial:
  std::vector<std::string> command;  // argv; words may hold {param} placeholders
  // "train.py:objective": run objective(trial) per trial (PYTHON -m cleansweep_trial ..., PYTHON from
  // trial.python, python3 by default); "" if unset.
  std::string objective;
  LauncherKind launcher = LauncherKind::kSpawn;  // forkserver: command[0] is the plugin
  std::optional<Millis> timeout;                 // wall-clock limit per trial; none if unset
  Millis kill_grace = Millis(10'000);            // SIGTERM -> SIGKILL delay
  Millis prune_grace = Millis(30'000);           // a pruned trial must exit within this
  std::int64_t log_limit_bytes = 16 << 20;       // per-trial log cap (head kept, tail kept)
  int tail_lines = 20;                           // last output lines stored in the study file
  std::map<std::string, std::string> env;        // extra environment for every trial
  int retries = 0;                               // re-runs of a trial that ends in a retry_on state
  std::set<TrialState> retry_on = {TrialState::kCrash, TrialState::kTimeout};
  std::int64_t memory_limit_bytes = 0;       // per-trial memory cap; 0: none
  Millis stop_grace = Millis(10'000);        // at a graceful stop, running trials may finish within this
  Millis gpu_clean_wait = Millis(30'000);    // how long a GPU may take to free an earlier trial's memory
  Millis prepare_timeout = Millis(300'000);  // forkserver: loading the plugin and its prepare() may take this
  // forkserver: while a trial runs, the next trial's process is already forked and waits for its
  // parameters (docs/fork-server.md). Refused with spawn.
  bool prefork = true;
  // Which of a trial's declared checkpoints stay (docs/checkpoints.md): the latest (older ones go
  // when a newer one is declared), all of them, or none once the trial has ended for good.
  CheckpointKeep checkpoint_keep = CheckpointKeep::kLast;
  // Gangs (docs/multi-gpu.md): each trial takes `gpus` workers at once, or as many as its
  // parameter `gpus_param` says (an int or a categorical of whole numbers, written "{g}").
  int gpus = 1;
  std::string gpus_param;
  // per_gpu: one process per worker of the gang (the torchrun model, RANK 0 .. K-1); single: one
  // process on the gang's first worker that sees every GPU of the gang.
  GangProcesses processes = GangProcesses::kPerGpu;
  // A gang that fits on one node never spans nodes unless this is set.
  bool allow_split = false;
  // The most workers one trial can take (gpus, or the largest value gpus_param can have); 1
  // unless the study runs gangs.
  int max_gpus = 1;
  bool gangs() const { return max_gpus > 1; }
  // trial.gpus is in the config (a number, 1 included, or a parameter): every trial, size 1 too,
  // gets torchrun's environment (RANK, WORLD_SIZE, MASTER_ADDR, a reserved MASTER_PORT, ...), so
  // one script serves every size.
  bool distributed = false;
  // How many workers a trial with these parameters takes.
  int GpusFor(const ParamSet& params) const;
};

struct WorkerOptions {  // workers:
  // "auto": the node's visible GPUs (CUDA_VISIBLE_DEVICES, else /proc/driver/nvidia);
  // "none": CPU only; otherwise an explicit list of device ids, shared round robin.
  std::string gpus = "auto";
  // Trials a busy worker holds besides its running one, so it starts the next without waiting for
  // rank 0 (docs/architecture.md, "Scheduling"). nullopt: auto, one while the study's recent
  // trials are short (under kShortTrial), none otherwise.
  std::optional<int> queue;
  // Gangs: trials that wait for workers start out of order when they fit (backfill), the first
  // waiting one holding workers for itself so that it is never starved. false: strictly in order.
  bool backfill = true;
};

// workers.queue: auto queues a trial on a busy worker only while trials last less than this. The
// round trip it hides is a millisecond or two: over 2% of a trial below 50 ms, and under it above,
// where the queue's costs weigh more (the sampler asks before it knows the running trials'
// results; a coordinator at its limit does more work per trial: bench/README.md).
inline constexpr double kShortTrialSeconds = 0.05;
inline constexpr int kMaxWorkerQueue = 4;
// The most workers one trial may take (trial.gpus).
inline constexpr int kMaxGangSize = 4096;

struct StudyConfig {
  StudyOptions study;
  SamplerOptions sampler;
  PrunerOptions pruner;
  TrialOptions trial;
  WorkerOptions workers;
  SearchSpace space;
  std::vector<ParamSet> enqueue;  // configurations to run first, whole or partial, in order
  std::string source;             // the file it came from, for messages
  std::string yaml_text;          // the effective config (overrides applied), stored in the study
};

// Reads and validates `path`, applying `overrides` ("study.n_trials=8", value in YAML syntax)
// first. Every failure is InvalidInput with "file:line:col: key: what is allowed".
Result<StudyConfig> LoadConfigFile(const std::string& path, const std::vector<std::string>& overrides);

// A config text longer than this is refused before it is parsed.
inline constexpr size_t kMaxConfigBytes = 1 << 20;

// Same, from text; `source` names it in messages.
Result<StudyConfig> LoadConfigText(const std::string& text, const std::string& source,
                                   const std::vector<std::string>& overrides = {});

// Built-in placeholders usable in trial.command besides parameter names.
inline constexpr const char* kPlaceholderTrial = "trial";
inline constexpr const char* kPlaceholderTrialDir = "trial_dir";

// Names of the {placeholders} in `word`; "{{" and "}}" are literal braces. Fails on an unclosed brace.
Result<std::vector<std::string>> PlaceholdersIn(const std::string& word);

}  // namespace cleansweep
