// ForkServerLauncher (trial.launcher: forkserver): trials are forked by a fork server this worker
// started (fork_server.hpp) from a plugin already loaded there, instead of being exec'd. Each
// trial is still a fresh process and the worker's own child, watched by the same code as a
// spawned trial (ChildTrial): the same protocol, process group, timeout, limits, cgroup and
// classification. A server that died is started again at the next trial; a trial whose start it
// took down with it is recorded FAIL with the reason, never lost.
#pragma once

#include <sys/types.h>

#include <string>

#include "launch/child_trial.hpp"
#include "launch/launcher.hpp"
#include "launch/spawn_launcher.hpp"
#include "util/unique_fd.hpp"

namespace cleansweep {

class ForkServerLauncher : public Launcher {
 public:
  // `server`: the cleansweep-forkserver executable; `plugin`: the trial plugin it loads;
  // `load_timeout`: how long loading it and its prepare() may take (trial.prepare_timeout). The
  // registry and the clock must outlive the launcher and the trials it started.
  ForkServerLauncher(ChildRegistry* children, std::string server, std::string plugin,
                     Millis load_timeout = Millis(300'000), const Clock* clock = SystemClock::Get());
  ~ForkServerLauncher() override;  // closes the server's socket; it exits, and is reaped
  ForkServerLauncher(const ForkServerLauncher&) = delete;
  ForkServerLauncher& operator=(const ForkServerLauncher&) = delete;

  // Starts the server and waits until it has loaded the plugin. The error says why it could not
  // (the plugin is missing, exports no entry point, initialised CUDA, ...). Start() calls it too.
  Status StartServer();
  Result<std::unique_ptr<TrialProcess>> Start(const LaunchSpec& spec) override;

  pid_t server_pid() const { return server_pid_; }
  int restarts() const { return restarts_; }  // servers started again after one died
  const std::string& plugin() const { return plugin_; }

 private:
  Result<StartedChild> Fork(const LaunchSpec& spec, const ChildEnds& ends);
  // Waits for the server's next message into *text: "" when it came, else why not (no answer
  // within `timeout`, the server is stopped). `note_slow_load`: say so on stderr, once, should the
  // wait pass 10 s (loading a plugin).
  std::string Await(Millis timeout, bool note_slow_load, std::string* text);
  // Reaps a server that is gone (or kills it), kills what it started, and says how it ended.
  std::string BuryServer();

  ChildRegistry* children_;
  const Clock* clock_;
  std::string server_;
  std::string plugin_;
  Millis load_timeout_;
  UniqueFd socket_;
  pid_t server_pid_ = -1;
  int restarts_ = 0;
  bool server_died_ = false;
};

}  // namespace cleansweep
