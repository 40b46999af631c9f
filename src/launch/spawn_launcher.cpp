#include "launch/spawn_launcher.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "launch/child_trial.hpp"

extern char** environ;

namespace cleansweep {
namespace {

struct ChildSetup {
  char** argv;
  char** envp;
  ChildEnds ends;
  ForkContext fork;
};

// The child's side of SpawnLauncher::Start, between fork and exec: async-signal-safe calls only
// (the worker has MPI threads). Never returns; on failure it writes errno to the error pipe and
// exits 127.
[[noreturn]] void ExecTrial(const ChildSetup& c) {
  BecomeTrial(c.ends, c.fork);  // the error pipe stays, close-on-exec
  ::execve(c.argv[0], c.argv, c.envp);
  ChildFailed(c.ends.error_fd);
}

// Fork, then execve in the child.
Result<pid_t> ForkExec(const LaunchSpec& spec, const ChildEnds& ends) {
  // Everything the child needs is made before fork: it may not allocate.
  std::vector<char*> argv;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = TrialEnvironment(spec.env);
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  ChildSetup c{argv.data(), envp.data(), ends, BeforeFork()};
  const pid_t pid = ::fork();
  if (pid == 0) ExecTrial(c);
  if (pid < 0) return Status::RuntimeError(std::string("fork: ") + std::strerror(errno));
  return pid;
}

}  // namespace

std::vector<std::string> TrialEnvironment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    if (name.rfind("OMPI_", 0) == 0 || name.rfind("PMIX_", 0) == 0 || name.rfind("PMI_", 0) == 0) continue;
    if (extra.count(name)) continue;
    env.push_back(entry);
  }
  for (const auto& [name, value] : extra) env.push_back(name + "=" + value);
  return env;
}

Result<std::unique_ptr<TrialProcess>> SpawnLauncher::Start(const LaunchSpec& spec) {
  return StartChildTrial(spec, children_, clock_, [&spec](const ChildEnds& ends) -> Result<StartedChild> {
    CS_ASSIGN_OR_RETURN(const pid_t pid, ForkExec(spec, ends));
    return StartedChild{pid, 0, /*forked_by_call=*/true};
  });
}

}  // namespace cleansweep
