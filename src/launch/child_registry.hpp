// ChildRegistry: the processes a worker started, and what makes sure that none of them outlives
// its trial or the worker: trial process groups while they run, helper children that are not
// trials (fork servers), the guard process, a cgroup v2 per trial where one can be made, and the
// sweep of strays (descendants of ended trials that left their group and came back to us).
// docs/reliability.md says which mechanism covers which escape.
//
// The worker owns one (cli/run_command.cpp) and hands it to its launchers. One per process: what
// it manages belongs to the process (PR_SET_CHILD_SUBREAPER, reaping children it did not name).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "launch/trial_cgroup.hpp"
#include "util/status.hpp"

namespace cleansweep {

class ChildRegistry {
 public:
  ChildRegistry() = default;
  // Removes the cgroup base, then closes the guard's pipe: the guard kills what still runs.
  ~ChildRegistry();
  ChildRegistry(const ChildRegistry&) = delete;
  ChildRegistry& operator=(const ChildRegistry&) = delete;

  // Makes this process a child subreaper: descendants of a trial that leave its process group
  // come back to us when their parent dies, and are killed when the trial ends. Call once.
  Status AdoptOrphans();
  // Runs every trial in a cgroup v2 of its own where this process may create them (see
  // launch/trial_cgroup.hpp); returns how trials are isolated here, for the user. Call once,
  // before StartGuard.
  std::string UseCgroups();
  void ReleaseCgroups();
  // Starts the guard: a small process that outlives this one and SIGKILLs the process group (and
  // the cgroup) of every trial still running when this process dies, however it dies. Call once.
  Status StartGuard();

  // A trial's process group, from its start until it is reaped.
  void TrackTrial(pid_t group);
  void UntrackTrial(pid_t group);
  // A helper child that is not a trial (a fork server), leader of its own process group: the
  // sweep of strays leaves it alone, and the guard kills its group (with what it started) should
  // this process die.
  void KeepHelper(pid_t pid);
  void ForgetHelper(pid_t pid);

  // A cgroup for the next trial (its memory limit set where the controller is delegated), or
  // nullopt when trials run without cgroups here.
  Result<std::optional<TrialCgroup>> NewTrialCgroup(std::int64_t memory_limit);

  // Kills (SIGKILL) and reaps every child of this process that is neither a running trial, a
  // helper nor the guard, with their process groups, until none is left. Does nothing unless
  // AdoptOrphans() succeeded.
  void KillStrays();
  // Reaps exited children that are not trials: descendants of ended trials that came back to us
  // and died. Cheap (no /proc scan); stops at a trial's own exit, which its owner reaps.
  void ReapStrayZombies();

 private:
  bool Known(pid_t pid) const;  // a running trial's group leader, a helper or the guard
  void TellGuard(pid_t message) const;

  std::set<pid_t> trials_;
  std::set<pid_t> helpers_;
  std::optional<CgroupBase> cgroups_;
  std::int64_t cgroup_serial_ = 0;
  bool subreaper_ = false;
  int guard_fd_ = -1;
  pid_t guard_pid_ = -1;
};

// What /proc/PID/stat says of a process: its state letter (R, S, D, T, Z, ...) and parent.
struct ProcessStat {
  char state = 0;
  pid_t ppid = 0;
};
std::optional<ProcessStat> ReadProcessStat(pid_t pid);  // nullopt when it is gone or unreadable

}  // namespace cleansweep
