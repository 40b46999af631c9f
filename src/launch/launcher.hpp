// Launcher: starts one trial as a fresh process and watches it to the end. The worker owns the
// launcher; the coordinator never starts a process. Two implementations share one trial state
// machine (ChildTrial, launch/child_trial.hpp): SpawnLauncher (fork and exec) and
// ForkServerLauncher (forked from a loaded plugin); tests use fakes (tests/support/fake_launcher.hpp).
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "launch/protocol_parser.hpp"
#include "trial/trial_record.hpp"
#include "util/duration.hpp"

namespace cleansweep {

struct LaunchSpec {
  std::vector<std::string> argv;           // argv[0] is a resolved path
  std::map<std::string, std::string> env;  // set on top of the worker's environment
  std::string trial_dir;                   // created if missing; the log goes in it
  std::string log_name = "log.txt";        // the log's name in trial_dir
  // false for a gang's processes other than rank 0, which speaks for the trial: exiting 0
  // without a final value completes them.
  bool value_required = true;
  std::optional<Millis> timeout;
  Millis kill_grace = Millis(10'000);
  std::int64_t log_limit_bytes = 16 << 20;
  int tail_lines = 20;
  std::int64_t memory_limit_bytes = 0;           // RLIMIT_DATA of the trial; 0: none
  std::vector<std::string> metrics = {"value"};  // the metrics it reports (StudyOptions::ReportedMetrics())
};

// How a trial ended. The worker adds the parameters, host and GPU to make a TrialRecord.
struct TrialOutcome {
  TrialState state = TrialState::kFail;
  std::optional<double> value;  // the first metric's
  std::vector<double> values;   // every reported metric's, when it reported its final values
  int exit_code = -1;
  int signal = 0;
  std::int64_t peak_rss_kb = 0;
  double cpu_seconds = std::numeric_limits<double>::quiet_NaN();  // user + system, all its processes
  std::int64_t last_step = -1;
  std::int64_t checkpoint_step = -1;  // the last step whose checkpoint it declared
  std::string reason;
  std::string output_tail;
  std::string attrs_json = "{}";
  double start_time = 0;
  double end_time = 0;
};

// One running trial. Not thread-safe. Destroying an unfinished one kills its process group.
class TrialProcess {
 public:
  virtual ~TrialProcess() = default;

  // Waits up to `max_wait` for output, reports or exit, and handles them; enforces the timeout.
  // Intermediate reports that arrived are appended to `steps`. Returns early on any event.
  virtual void Poll(Millis max_wait, std::vector<StepValue>* steps) = 0;
  virtual bool Finished() const = 0;
  // SIGTERM to the trial's process group now, SIGKILL after the grace period; the trial ends in
  // `state` with `reason`, whatever it reports afterwards.
  virtual void Stop(TrialState state, const std::string& reason) = 0;
  // Stop without a grace period: SIGKILL to the process group now.
  virtual void Kill(TrialState state, const std::string& reason) = 0;
  // Tells the trial on its control pipe that it is pruned. It ends PRUNED with `reason` and its
  // last reported value however it exits; one that is still running after `grace` is stopped.
  virtual void RequestPrune(const std::string& reason, Millis grace) = 0;
  // Define-by-run: writes `line` (one JSON object, without its newline) to the trial's control
  // pipe, where the trial waits for the answer to its suggest request. kFull: the pipe holds
  // answers the trial never read (the caller fails the trial); kClosed: nobody can read it (the
  // trial is ending, or closed CLEANSWEEP_CONTROL_FD).
  enum class Delivery { kDelivered, kFull, kClosed };
  virtual Delivery Answer(const std::string& line) {
    (void)line;
    return Delivery::kClosed;
  }
  // Valid once Finished().
  virtual const TrialOutcome& Outcome() const = 0;
  // The trial's process group (its processes and their descendants that stayed in it), for GPU
  // telemetry; -1 when there is none (fakes).
  virtual int ProcessGroup() const { return -1; }
};

class Launcher {
 public:
  virtual ~Launcher() = default;
  // Starts the trial. A trial that cannot start (exec failure) is returned already finished
  // with state FAIL and the reason; a worker that cannot start trials (no trial folder, no
  // pipes, no fork) returns an error, and the sweep stops.
  virtual Result<std::unique_ptr<TrialProcess>> Start(const LaunchSpec& spec) = 0;
};

// The memory cap a trial ran under, so that dying at it reads as OOM_HOST.
struct MemoryCap {
  std::int64_t limit_bytes = 0;  // 0: none
  std::string how;               // "RLIMIT_DATA" or "cgroup v2 memory.max"
  std::int64_t oom_kills = 0;    // kills by the kernel's OOM killer in the trial's cgroup
  // Resident memory the trial shared with the fork server at birth (its loaded plugin and what
  // prepare() made), KiB: in its peak RSS, but not its own use, so not charged to the limit.
  std::int64_t inherited_kb = 0;
};

// Decides the state of a trial from how it ended; see docs/trial-protocol.md for the rules.
// `stop_state` is set when we stopped it (timeout, shutdown, protocol error). `value_required`:
// LaunchSpec's.
void ClassifyOutcome(const ProtocolParser& reports, std::optional<TrialState> stop_state,
                     const std::string& stop_reason, const MemoryCap& memory, TrialOutcome* outcome,
                     bool value_required = true);

}  // namespace cleansweep
