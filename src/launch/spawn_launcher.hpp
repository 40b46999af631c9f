// SpawnLauncher: every trial is a new process made with fork and execve (no shell), in its own
// process group, with stdin from /dev/null, stdout+stderr into the worker, the report pipe on fd 3
// and the control pipe on fd 4. It dies with its worker (PR_SET_PDEATHSIG); the worker's
// ChildRegistry tracks the rest of its process tree (docs/reliability.md says how).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "launch/child_process.hpp"
#include "launch/child_registry.hpp"
#include "launch/launcher.hpp"
#include "util/clock.hpp"

namespace cleansweep {

class SpawnLauncher : public Launcher {
 public:
  // The file descriptors the trial finds its report pipe (CLEANSWEEP_REPORT_FD) and its control
  // pipe (CLEANSWEEP_CONTROL_FD) on.
  static constexpr int kReportFd = kTrialReportFd;
  static constexpr int kControlFd = kTrialControlFd;

  // Both must outlive the launcher and the trials it started.
  explicit SpawnLauncher(ChildRegistry* children, const Clock* clock = SystemClock::Get())
      : children_(children), clock_(clock) {}

  Result<std::unique_ptr<TrialProcess>> Start(const LaunchSpec& spec) override;

 private:
  ChildRegistry* children_;
  const Clock* clock_;
};

// The environment a trial inherits from the worker: ours minus the MPI launcher's variables
// (OMPI_*, PMIX_*, PMI_*), so that a trial that uses MPI itself does not join our job; then `extra`.
std::vector<std::string> TrialEnvironment(const std::map<std::string, std::string>& extra);

}  // namespace cleansweep
