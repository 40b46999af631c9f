// ForkServerLauncher (trial.launcher: forkserver): trials are forked by a fork server this worker
// started (fork_server.hpp) from a plugin already loaded there, instead of being exec'd. Each
// trial is still a fresh process and the worker's own child, watched by the same code as a
// spawned trial (ChildTrial): the same protocol, process group, timeout, limits, cgroup and
// classification. A server that died is started again at the next trial; a trial whose start it
// took down with it is recorded FAIL with the reason, never lost.
//
// With `prefork` (trial.prefork) the launcher keeps one standby child: forked by the server ahead
// of time, it waits for its trial's request on a socket of its own, so a trial starts with one
// message instead of a fork. The next standby is forked while the trial runs.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "launch/child_trial.hpp"
#include "launch/fork_server_protocol.hpp"
#include "launch/launcher.hpp"
#include "launch/spawn_launcher.hpp"
#include "util/unique_fd.hpp"

namespace cleansweep {

class ForkServerLauncher : public Launcher {
 public:
  // `server`: the cleansweep-forkserver executable; `plugin`: the trial plugin it loads;
  // `load_timeout`: how long loading it and its prepare() may take (trial.prepare_timeout);
  // `prefork`: keep a standby child (above). The registry and the clock must outlive the launcher
  // and the trials it started.
  ForkServerLauncher(ChildRegistry* children, std::string server, std::string plugin,
                     Millis load_timeout = Millis(300'000), const Clock* clock = SystemClock::Get(),
                     bool prefork = false);
  // Dismisses the standby, closes the server's socket; both exit and are reaped.
  ~ForkServerLauncher() override;
  ForkServerLauncher(const ForkServerLauncher&) = delete;
  ForkServerLauncher& operator=(const ForkServerLauncher&) = delete;

  // Starts the server and waits until it has loaded the plugin (and forks the first standby). The
  // error says why it could not (the plugin is missing, exports no entry point, initialised CUDA,
  // ...). Start() calls it too.
  Status StartServer();
  Result<std::unique_ptr<TrialProcess>> Start(const LaunchSpec& spec) override;

  pid_t server_pid() const { return server_pid_; }
  int restarts() const { return restarts_; }  // servers started again after one died
  const std::string& plugin() const { return plugin_; }
  // The standby waiting for the next trial (-1: none), once the server's answer is read.
  pid_t standby_pid() {
    CollectStandby();
    return standby_ ? standby_->pid : -1;
  }
  int standby_starts() const { return standby_starts_; }  // trials that began as a standby

 private:
  struct Standby {
    pid_t pid = -1;
    UniqueFd socket;                // its end of the pair: the trial's request goes here
    std::int64_t inherited_kb = 0;  // the server's resident memory when it forked (StartedChild)
  };

  Result<StartedChild> Fork(const LaunchSpec& spec, const ChildEnds& ends);
  // Asks the server for the next standby, without waiting: the trial just started runs meanwhile.
  void RequestStandby();
  // Reads the server's answer to RequestStandby(), if one is due. Without a standby (the server is
  // gone, clone failed) the next trial is forked as usual.
  void CollectStandby();
  // Hands the request to the standby, which becomes the trial; nullopt when it is gone.
  std::optional<StartedChild> WakeStandby(const ForkRequest& request, const std::vector<int>& fds);
  void DropStandby();         // kills and reaps it
  bool ServerExited() const;  // the server died since it last answered (not yet reaped)
  // Waits for the server's next message into *text (and a descriptor that came with it into
  // *fd): "" when it came, else why not (no answer within `timeout`, the server is stopped).
  // `note_slow_load`: say so on stderr, once, should the wait pass 10 s (loading a plugin).
  std::string Await(Millis timeout, bool note_slow_load, std::string* text, UniqueFd* fd = nullptr);
  // Reaps a server that is gone (or kills it), kills what it started, and says how it ended.
  std::string BuryServer();
  // The server is lost (dead, hung, stopped): `kill` it first when it may still run, bury it, warn
  // that a new one starts (StartServer() starts it when next needed), and say how it ended.
  // `silent`: why it did not answer, or "" when it simply died.
  std::string LoseServer(const std::string& silent, bool kill);

  ChildRegistry* children_;
  const Clock* clock_;
  std::string server_;
  std::string plugin_;
  Millis load_timeout_;
  UniqueFd socket_;
  pid_t server_pid_ = -1;
  int restarts_ = 0;
  bool server_died_ = false;
  bool prefork_;
  std::optional<Standby> standby_;
  bool standby_asked_ = false;  // the server's answer to RequestStandby() is still to be read
  int standby_starts_ = 0;
};

}  // namespace cleansweep
