// SpawnLauncher: every trial is a new process made with fork and execve (no shell), in its own
// process group, with stdin from /dev/null, stdout+stderr into the worker, the report pipe on fd 3
// and the control pipe on fd 4. It dies with its worker (PR_SET_PDEATHSIG); docs/reliability.md
// says how the rest of its process tree is tracked.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>

#include "launch/child_process.hpp"
#include "launch/launcher.hpp"

namespace cleansweep {

class SpawnLauncher : public Launcher {
 public:
  // The file descriptors the trial finds its report pipe (CLEANSWEEP_REPORT_FD) and its control
  // pipe (CLEANSWEEP_CONTROL_FD) on.
  static constexpr int kReportFd = kTrialReportFd;
  static constexpr int kControlFd = kTrialControlFd;

  Result<std::unique_ptr<TrialProcess>> Start(const LaunchSpec& spec) override;

  // Makes this process a child subreaper: descendants of a trial that leave its process group
  // come back to us when their parent dies, and are killed when the trial ends. Call once.
  static Status AdoptOrphans();
  // Runs every trial in a cgroup v2 of its own where this process may create them (see
  // launch/trial_cgroup.hpp); returns how trials are isolated here, for the user. Call once,
  // before StartGuard; ReleaseCgroups when done.
  static std::string UseCgroups();
  static void ReleaseCgroups();
  // Starts the guard: a small process that outlives this one and SIGKILLs the process group (and
  // the cgroup) of every trial still running when this process dies, however it dies. Call once.
  static Status StartGuard();
};

// A trial's process, just started.
struct StartedChild {
  pid_t pid = -1;
  std::int64_t inherited_rss_kb = 0;  // resident memory shared with a fork server at birth (MemoryCap)
};

// Starts the process of one trial, which must be a child of this process (fork, or clone with
// CLONE_PARENT from a helper of ours), in a process group of its own.
using ChildStarter = std::function<Result<StartedChild>(const ChildEnds&)>;

// What every launcher shares: makes the trial folder, its log, its cgroup and its pipes, calls
// `start`, then watches the child as SpawnLauncher watches its own (timeout, limits, classification).
Result<std::unique_ptr<TrialProcess>> StartChildTrial(const LaunchSpec& spec, const ChildStarter& start);

// A helper child of this process that is not a trial (a fork server), leader of its own process
// group: the sweep of stray children leaves it alone, and the guard kills its group (with what it
// started) should this process die. At most 8 at a time.
void KeepHelperChild(pid_t pid);
void ForgetHelperChild(pid_t pid);

// Kills (SIGKILL) and reaps every child of this process that is neither a running trial, a helper
// nor the guard, with their process groups, until none is left: what a dead helper left behind
// comes back here (AdoptOrphans). Does nothing unless AdoptOrphans() succeeded.
void KillStrayChildren();

// What /proc/PID/stat says of a process: its state letter (R, S, D, T, Z, ...) and parent.
struct ProcessStat {
  char state = 0;
  pid_t ppid = 0;
};
std::optional<ProcessStat> ReadProcessStat(pid_t pid);  // nullopt when it is gone or unreadable

// The environment a trial inherits from the worker: ours minus the MPI launcher's variables
// (OMPI_*, PMIX_*, PMI_*), so that a trial that uses MPI itself does not join our job; then `extra`.
std::vector<std::string> TrialEnvironment(const std::map<std::string, std::string>& extra);

}  // namespace cleansweep
