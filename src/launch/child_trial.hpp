// A trial run as a child process of this worker, watched from its start to its outcome: the state
// machine both launchers share. SpawnLauncher forks and execs the child, ForkServerLauncher has
// the fork server fork it; from then on it is the same: its output into the log and the tail, its
// reports parsed, its deadlines (timeout, prune grace, kill grace) enforced, stopped or killed on
// request, reaped with what it left behind, and its outcome classified (ClassifyOutcome).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>

#include "launch/child_process.hpp"
#include "launch/child_registry.hpp"
#include "launch/launcher.hpp"
#include "util/clock.hpp"

namespace cleansweep {

// A trial's process, just started.
struct StartedChild {
  pid_t pid = -1;
  std::int64_t inherited_rss_kb = 0;  // resident memory shared with a fork server at birth (MemoryCap)
  // Forked by the starter itself, at once: the program may run before the call returns, so its time
  // counts from the call. False where the call may first wait for a helper (a fork server starting).
  bool forked_by_call = false;
};

// Starts the process of one trial, which must be a child of this process (fork, or clone with
// CLONE_PARENT from a helper of ours), in a process group of its own.
using ChildStarter = std::function<Result<StartedChild>(const ChildEnds&)>;

// Makes the trial folder, its log, its cgroup (from `children`) and its pipes, calls `start`, and
// returns the trial, watched until it ends. Its times (timeout, grace periods, start and end) are
// read from `clock`. An error is the worker's (no folder, no pipes, no fork): the sweep stops.
Result<std::unique_ptr<TrialProcess>> StartChildTrial(const LaunchSpec& spec, ChildRegistry* children,
                                                      const Clock* clock, const ChildStarter& start);

}  // namespace cleansweep
