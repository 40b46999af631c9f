// What the study knows about one trial. Plain data: samplers, the coordinator, the worker and the
// study file all share it, and none of them does I/O through it.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "trial/param_value.hpp"

namespace cleansweep {

enum class TrialState : std::int8_t {
  kRunning,
  kComplete,     // exited 0 and reported a final value
  kPruned,       // stopped early by a pruner
  kFail,         // non-zero exit, no final value, or a malformed report
  kCrash,        // killed by a signal it did not get from us
  kOomGpu,       // reported (or showed) a CUDA out-of-memory error
  kOomHost,      // reported a host allocation failure or was OOM-killed
  kTimeout,      // ran past trial.timeout and was killed
  kInterrupted,  // stopped because the sweep was shutting down; may be re-run
  kPaused,       // at rest at a rung of a pruner that resumes (pruner.resume); a promotion continues it
};

const char* TrialStateName(TrialState state);
// The states of a trial that ended badly by its own doing: FAIL, CRASH, OOM_GPU, OOM_HOST, TIMEOUT.
bool IsFailure(TrialState state);
// Parses the names TrialStateName returns; false when unknown.
bool ParseTrialState(const std::string& name, TrialState* state);

struct TrialRecord {
  std::int64_t number = -1;
  TrialState state = TrialState::kRunning;
  std::optional<double> value;  // the objective (a multi-metric study's first), when the trial reported one
  // A multi-metric study's COMPLETE trial: every metric's value, in study.metrics order; empty
  // otherwise (a single-metric study has `value` only).
  std::vector<double> values;
  // On the Pareto front of the study's COMPLETE multi-metric trials (docs/study-format.md).
  bool pareto = false;
  // How far a COMPLETE trial lies outside study.constraints (StudyOptions::Violation): 0 when it
  // meets them; NaN without constraints, for other states, and in older files.
  double violation = std::numeric_limits<double>::quiet_NaN();
  bool infeasible() const { return violation > 0; }
  ParamSet params;  // the declared parameters (space:) and those the trial defined (define-by-run)
  // The parameters the trial defined while it ran (docs/trial-protocol.md), name -> distribution
  // as JSON (DistributionJson); their values are in `params`. The study file keeps them in
  // /params; a worker's result has none (rank 0 records them as the trial asks).
  std::map<std::string, std::string> distributions;
  double start_time = 0;  // Unix time, seconds
  double end_time = 0;
  int worker = -1;  // MPI rank that ran it
  std::string host;
  std::string gpu;  // CUDA_VISIBLE_DEVICES given to the trial; "" on CPU (a gang's: every GPU it held)
  // A gang trial (trial.gpus; docs/multi-gpu.md): how many workers it held, and which, its rank 0's
  // first ("1-4", "5,9"); `worker` and `host` are its rank 0's. 1 and "" for an ordinary trial.
  int gpus = 1;
  std::string workers;
  int exit_code = -1;                // -1 when killed by a signal
  int signal = 0;                    // the signal that ended it, 0 if none
  std::int64_t peak_rss_kb = 0;      // summed over a gang's processes
  std::int64_t peak_rss_max_kb = 0;  // the most one of its processes held
  int attempt = 1;                   // 1 for a fresh trial, n+1 for a re-run of one that ran n times
  std::int64_t retry_of = -1;        // the trial this one re-runs (a retry or an interrupted trial)
  bool enqueued = false;             // its parameters came (partly) from the config's `enqueue:`
  double sampler_ms = 0;             // time rank 0 spent choosing its parameters
  std::int64_t last_step = -1;       // step of its last intermediate report, -1 if none
  // Checkpoints (docs/checkpoints.md): the last step whose checkpoint the trial declared, over all
  // its attempts, and the step this attempt resumed from; -1 for none.
  std::int64_t checkpoint_step = -1;
  std::int64_t resumed_from = -1;
  // Population-based training (sampler.kind: pbt): the trial whose checkpoint this one started
  // from (-1: none, it started from the beginning), and how many such starts lie behind it (0 for
  // a member drawn at random).
  std::int64_t parent = -1;
  std::int64_t generation = 0;
  std::string reason;             // why it ended as it did, for anything but COMPLETE
  std::string output_tail;        // the last lines of its stdout/stderr
  std::string attrs_json = "{}";  // user attributes, a JSON object
  // GPU memory in MiB, from NVML (docs/gpu.md); NaN when unknown (no GPU, no NVML).
  double gpu_mem_before_mb = std::numeric_limits<double>::quiet_NaN();   // the device's used memory at start
  double gpu_mem_peak_mb = std::numeric_limits<double>::quiet_NaN();     // the most the trial's processes held
  double gpu_mem_after_mb = std::numeric_limits<double>::quiet_NaN();    // the device's used memory after it
  double gpu_mem_foreign_mb = std::numeric_limits<double>::quiet_NaN();  // held at start by processes not ours
  // A gang's gpu_mem_peak_mb is the sum over its processes; this is the most one of them held.
  double gpu_mem_peak_max_mb = std::numeric_limits<double>::quiet_NaN();
  // Unix time its worker became free for it: the end of the trial that worker ran before, NaN for a
  // worker's first trial. start_time minus this is the worker's idle gap (docs/study-format.md).
  double worker_free_time = std::numeric_limits<double>::quiet_NaN();
  // What the trial cost (docs/study-format.md); NaN when unknown (a RUNNING row, a trial that never
  // started, an older file). cpu_seconds: user + system time of all its processes. gpu_seconds:
  // its wall time times the GPUs it was given (0 on CPU). energy_j: what its GPUs drew while it
  // ran, from NVML's energy counters; NaN without NVML or where the GPU does not count energy.
  double cpu_seconds = std::numeric_limits<double>::quiet_NaN();
  double gpu_seconds = std::numeric_limits<double>::quiet_NaN();
  double energy_j = std::numeric_limits<double>::quiet_NaN();

  double duration() const { return end_time - start_time; }
  // How long its worker sat idle before it, ms: from worker_free_time to its start. None for a
  // worker's first trial, an older file's rows, and a RUNNING row (not started, or not known yet).
  std::optional<double> idle_gap_ms() const {
    if (state == TrialState::kRunning || !std::isfinite(worker_free_time)) return std::nullopt;
    return (start_time - worker_free_time) * 1e3;
  }

  template <class Archive>
  void serialize(Archive& ar) {
    ar(number, state, value, params, start_time, end_time, worker, host, gpu, exit_code, signal, peak_rss_kb, attempt,
       retry_of, enqueued, sampler_ms, last_step, reason, output_tail, attrs_json, gpu_mem_before_mb, gpu_mem_peak_mb,
       gpu_mem_after_mb, gpu_mem_foreign_mb, worker_free_time, cpu_seconds, gpu_seconds, energy_j, values, pareto,
       violation, checkpoint_step, resumed_from, parent, generation, gpus, workers, peak_rss_max_kb,
       gpu_mem_peak_max_mb, distributions);
  }
};

// One parameter a trial defined while it ran, as the study file's /params holds it.
struct TrialParamRow {
  std::int64_t trial = -1;
  std::string name;
  ParamValue value;
  std::string distribution;  // DistributionJson
};

struct IntermediateValue {
  std::int64_t trial = -1;
  std::int64_t step = 0;
  double value = 0;  // the first metric's
  double time = 0;   // Unix time, seconds
  // With several reported metrics: each one's at this step, NaN where not reported; else empty.
  std::vector<double> values;

  template <class Archive>
  void serialize(Archive& ar) {
    ar(trial, step, value, time, values);
  }
};

// Whether an ended trial has a value model-based samplers can rank: completed (and feasible),
// or pruned or paused with its last reported value.
// A COMPLETE trial outside study.constraints has no score: samplers treat it like a failure.
inline bool HasScore(const TrialRecord& r) {
  return (r.state == TrialState::kComplete || r.state == TrialState::kPruned || r.state == TrialState::kPaused) &&
         r.value.has_value() && !r.infeasible();
}

// Trials a resumed study continues rather than counts as ended (so their checkpoints must stay):
// RUNNING rows (cut off), INTERRUPTED ones not yet run again under a new number, and PAUSED ones.
std::set<std::int64_t> TrialsToContinue(const std::vector<TrialRecord>& trials);

// What a sampler may look at: every finished trial, and the parameters of those still running.
struct TrialHistory {
  std::vector<TrialRecord> finished;         // in order of completion; a trial appears once, when final
  std::map<std::int64_t, ParamSet> running;  // by trial number
  // Trials at rest at a rung (pruner.resume), by number: evidence as a pruned trial is, until a
  // promotion makes them run again (they leave) or the study ends (they join `finished`, PRUNED).
  // Kept apart so that `finished` only grows and never holds a trial twice.
  std::map<std::int64_t, TrialRecord> paused;
  // Define-by-run: the parameters trials defined while they ran, name -> the distribution last
  // asked for (DistributionJson). Their values are in the trials' params, beside the declared ones.
  std::map<std::string, std::string> trial_defined;
};

}  // namespace cleansweep
