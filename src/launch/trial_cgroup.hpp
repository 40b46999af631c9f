// Trial cgroups (cgroup v2): where the worker may create cgroups below its own, every trial runs in
// a cgroup of its own. Then the kernel, not the process tree, says which processes belong to the
// trial: cgroup.kill ends all of them however they detached (setsid, double fork), even after the
// worker died; and where the memory controller is delegated, trial.memory_limit becomes the
// cgroup's memory.max and the kernel's OOM kills are counted in memory.events.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "util/status.hpp"
#include "util/unique_fd.hpp"

namespace cleansweep {

// The folder this worker's trial cgroups go in: "<its cgroup>/cleansweep-<pid>".
struct CgroupBase {
  std::string dir;
  bool memory = false;  // the memory controller is enabled for the trial cgroups
};

// Finds the worker's cgroup v2 folder from `proc`/self/cgroup and `proc`/self/mountinfo, creates the
// base folder in it and enables the memory controller there if it can. nullopt, with `why`, when
// cgroup v2 is not mounted, the worker's cgroup is not writable or not v2 only.
std::optional<CgroupBase> SetUpCgroupBase(const std::string& proc, std::string* why);

// Removes the base folder (and any empty trial cgroups left in it).
void RemoveCgroupBase(const CgroupBase& base);

class TrialCgroup {
 public:
  // Creates base.dir/`name`; with base.memory and memory_limit > 0, sets memory.max (and no swap).
  static Result<TrialCgroup> Create(const CgroupBase& base, const std::string& name, std::int64_t memory_limit);

  TrialCgroup() = default;
  TrialCgroup(TrialCgroup&&) = default;
  TrialCgroup& operator=(TrialCgroup&&) = default;
  ~TrialCgroup();  // kills what is left, then removes the folder

  // Open cgroup.procs for writing: a child writes "0" to it (async-signal-safe) to move itself in.
  int procs_fd() const { return procs_.get(); }
  // SIGKILL to every process in the cgroup (cgroup.kill; one by one on kernels before 5.14).
  void KillAll() const;
  // Waits up to `max_ms` for the cgroup to hold no process; false if some remain.
  bool WaitEmpty(int max_ms) const;
  // memory.events oom_kill: processes the kernel's OOM killer killed in it (0 without memory).
  std::int64_t OomKills() const;
  // cpu.stat usage_usec in seconds: CPU time of every process that ran in it, those that left
  // the trial's process tree included; nullopt when unreadable.
  std::optional<double> CpuSeconds() const;
  bool memory_limited() const { return memory_limited_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  UniqueFd procs_;
  bool memory_limited_ = false;
};

}  // namespace cleansweep
