#include "launch/fork_server_launcher.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <utility>

#include "launch/child_process.hpp"
#include "launch/child_trial.hpp"
#include "launch/fork_server_protocol.hpp"

namespace cleansweep {
namespace {

constexpr int kServerSocketFd = 3;  // where the server finds its end of the socket
// A fork takes milliseconds (a second for a server of a hundred GB): this long means it hangs.
constexpr Millis kReplyTimeout(20'000);
constexpr Millis kLoadingNote(10'000);  // a prepare() this slow is worth a line, once

std::string DescribeStatus(int status) {
  if (WIFSIGNALED(status))
    return std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" + ::strsignal(WTERMSIG(status)) +
           ")";
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

ForkServerLauncher::ForkServerLauncher(ChildRegistry* children, std::string server, std::string plugin,
                                       Millis load_timeout, const Clock* clock, bool prefork)
    : children_(children),
      clock_(clock),
      server_(std::move(server)),
      plugin_(std::move(plugin)),
      load_timeout_(load_timeout),
      prefork_(prefork) {}

ForkServerLauncher::~ForkServerLauncher() {
  CollectStandby();  // one still being forked is ours to reap too
  DropStandby();
  socket_.Reset();  // EOF: the server returns
  if (server_pid_ > 0) (void)BuryServer();
}

std::string ForkServerLauncher::Await(Millis timeout, bool note_slow_load, std::string* text, UniqueFd* fd) {
  const auto start = std::chrono::steady_clock::now();
  bool noted = !note_slow_load;
  text->clear();
  for (;;) {
    pollfd p{socket_.get(), POLLIN, 0};
    const int ready = RetryOnEintr([&] { return ::poll(&p, 1, 100); });
    if (ready > 0) {
      const Status got = ReceiveMessage(socket_.get(), 0, text, fd);
      return got.ok() ? "" : got.message();
    }
    if (ready < 0) return std::string("poll: ") + std::strerror(errno);
    const Millis waited = std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - start);
    // A stopped server (SIGSTOP, SIGTSTP) answers nothing until it is continued: do not wait for it.
    if (const auto stat = ReadProcessStat(server_pid_); stat && stat->state == 'T') {
      return "is stopped (SIGSTOP or SIGTSTP)";
    }
    if (waited >= timeout) return "did not answer within " + FormatDuration(timeout);
    if (!noted && waited >= kLoadingNote) {
      noted = true;
      std::fprintf(stderr,
                   "cleansweep: note: the fork server (pid %d) has been loading %s and running its "
                   "cleansweep_trial_prepare() for %s; trial.prepare_timeout is %s\n",
                   static_cast<int>(server_pid_), plugin_.c_str(), FormatDuration(waited).c_str(),
                   FormatDuration(timeout).c_str());
    }
  }
}

std::string ForkServerLauncher::BuryServer() {
  DropStandby();           // a copy of the server that failed: the next one forks its own
  standby_asked_ = false;  // one it forked and never named goes with the strays below
  // Without a server there is nothing to bury: waitpid(-1) would reap any child, kill(1) signal init.
  if (server_pid_ <= 0) return "gone";
  std::string how = "gone";
  int status = 0;
  pid_t r = 0;
  for (int i = 0; i < 100 && (r = ::waitpid(server_pid_, &status, WNOHANG)) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (r == 0) {  // still there after a second: it hangs
    ::kill(server_pid_, SIGKILL);
    RetryOnEintr([&] { return ::waitpid(server_pid_, &status, 0); });
    how = "hung, killed";
  } else if (r == server_pid_) {
    how = DescribeStatus(status);
  }
  // What prepare() started goes with it: what stayed in the server's process group, then what
  // left the group and came back to this worker when the server died.
  ::kill(-server_pid_, SIGKILL);
  children_->ForgetHelper(server_pid_);
  children_->KillStrays();
  server_pid_ = -1;
  socket_.Reset();
  return how;
}

Status ForkServerLauncher::StartServer() {
  if (server_pid_ > 0) return Status::Ok();
  if (server_died_) {
    ++restarts_;
    server_died_ = false;
  }
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
    return Status::RuntimeError(std::string("socketpair: ") + std::strerror(errno));
  }
  UniqueFd ours(pair[0]), theirs(pair[1]);
  // Everything the child needs is made before fork: the worker has MPI threads.
  std::vector<std::string> args = {server_, "--socket", std::to_string(kServerSocketFd), plugin_};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = TrialEnvironment({});
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const ForkContext fork = BeforeFork();
  const int socket_fd = theirs.get();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Async-signal-safe calls only, up to execve. Its own process group: a Ctrl-C for the job is
    // not for it; it dies with the worker.
    ::setpgid(0, 0);
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != fork.parent) ::_exit(127);
    const int null = ::open("/dev/null", O_RDONLY);
    if (null < 0 || ::dup2(null, 0) < 0 || ::dup2(2, 1) < 0 || ::dup2(socket_fd, kServerSocketFd) < 0) ::_exit(127);
    // dup2 onto itself keeps close-on-exec: the socket would not survive the execve.
    if (socket_fd == kServerSocketFd) ::fcntl(kServerSocketFd, F_SETFD, 0);
    CloseFdsAbove(kServerSocketFd, -1, fork.max_fd);
    ResetSignals();
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  if (pid < 0) return Status::RuntimeError(std::string("fork: ") + std::strerror(errno));
  theirs.Reset();
  server_pid_ = pid;
  children_->KeepHelper(pid);
  socket_ = std::move(ours);
  std::string hello;
  const std::string silent = Await(load_timeout_, /*note_slow_load=*/true, &hello);
  if (silent.empty() && hello == "ready") {
    RequestStandby();  // the first trial starts from one too
    CollectStandby();
    return Status::Ok();
  }
  std::string why;
  if (!silent.empty()) {
    why = "it " + silent +
          " while loading the plugin and running its cleansweep_trial_prepare() (trial.prepare_timeout " + "is " +
          FormatDuration(load_timeout_) + "); the server was killed";
  } else if (hello.rfind("error: ", 0) == 0) {
    why = hello.substr(7);
  } else {
    why = "it " + BuryServer() + " while loading the plugin (its messages are in the worker's output)";
  }
  if (server_pid_ > 0) {
    ::kill(server_pid_, SIGKILL);
    (void)BuryServer();
  }
  return Status::InvalidInput("trial.launcher forkserver: the fork server (" + server_ + ") could not load " + plugin_ +
                              ": " + why);
}

std::string ForkServerLauncher::LoseServer(const std::string& silent, bool kill) {
  const pid_t pid = server_pid_;
  if (kill && pid > 0) ::kill(pid, SIGKILL);  // a stopped process dies of it too
  const std::string buried = BuryServer();
  const std::string death = silent.empty() ? buried : silent + ", killed";
  server_died_ = true;
  std::fprintf(stderr, "cleansweep: warning: the fork server (pid %d, %s) %s; starting a new one\n",
               static_cast<int>(pid), plugin_.c_str(), death.c_str());
  return death;
}

bool ForkServerLauncher::ServerExited() const {
  if (server_pid_ <= 0) return false;
  siginfo_t info{};  // WNOWAIT: BuryServer reaps it and reads how it ended
  return ::waitid(P_PID, static_cast<id_t>(server_pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0;
}

void ForkServerLauncher::RequestStandby() {
  if (!prefork_ || standby_ || standby_asked_ || server_pid_ <= 0) return;
  ForkRequest request;
  request.standby = true;
  request.parent = ::getpid();
  // A server that is gone is found out by the next trial's request, which replaces it.
  standby_asked_ = SendForkRequest(socket_.get(), request, {}).ok();
}

void ForkServerLauncher::CollectStandby() {
  if (!standby_asked_) return;
  standby_asked_ = false;
  std::string reply;
  UniqueFd socket;
  if (const std::string silent = Await(kReplyTimeout, /*note_slow_load=*/false, &reply, &socket); !silent.empty()) {
    (void)LoseServer(silent, /*kill=*/true);  // its late answer must never be read as the next trial's
    return;
  }
  char* rest = nullptr;
  const long pid = std::strtol(reply.c_str(), &rest, 10);
  if (pid <= 0 || !socket.valid()) return;                      // clone failed (-errno): no standby this time
  ::setpgid(static_cast<pid_t>(pid), static_cast<pid_t>(pid));  // as it does itself: whoever is first
  children_->KeepHelper(static_cast<pid_t>(pid));
  standby_ = Standby{static_cast<pid_t>(pid), std::move(socket), std::strtoll(rest, nullptr, 10)};
}

void ForkServerLauncher::DropStandby() {
  if (!standby_) return;
  const pid_t pid = standby_->pid;
  ::kill(pid, SIGKILL);  // it runs nothing else
  int status;
  RetryOnEintr([&] { return ::waitpid(pid, &status, 0); });
  children_->ForgetHelper(pid);
  standby_.reset();
}

std::optional<StartedChild> ForkServerLauncher::WakeStandby(const ForkRequest& request, const std::vector<int>& fds) {
  const pid_t pid = standby_->pid;
  const int socket = standby_->socket.get();
  // It answers "taken" once it holds the request: from then on it is the trial, and how it ends is
  // the trial's outcome. No answer (it died, killed from outside; it is stopped; it hangs): it is
  // killed, and the trial forked by the server instead.
  bool taken = SendForkRequest(socket, request, fds).ok();
  const auto deadline = std::chrono::steady_clock::now() + kReplyTimeout;
  for (std::string answer; taken;) {
    pollfd p{socket, POLLIN, 0};
    const int ready = RetryOnEintr([&] { return ::poll(&p, 1, 100); });
    if (ready > 0) {
      taken = ReceiveMessage(socket, 0, &answer).ok() && answer == "taken";
      break;
    }
    const std::optional<ProcessStat> stat = ReadProcessStat(pid);
    taken =
        ready == 0 && stat && stat->state != 'T' && stat->state != 'Z' && std::chrono::steady_clock::now() < deadline;
  }
  if (!taken) {
    DropStandby();
    return std::nullopt;
  }
  const StartedChild started{pid, standby_->inherited_kb};
  children_->ForgetHelper(pid);  // a trial from now on: ChildTrial tracks it
  standby_.reset();
  ++standby_starts_;
  return started;
}

Result<StartedChild> ForkServerLauncher::Fork(const LaunchSpec& spec, const ChildEnds& ends) {
  ForkRequest request;
  request.argv = spec.argv;
  request.env = TrialEnvironment(spec.env);
  request.memory_limit = ends.memory_limit;
  request.parent = ::getpid();
  std::vector<int> fds = {ends.out_fd, ends.report_fd, ends.control_fd, ends.error_fd};
  if (ends.cgroup_fd >= 0) {
    request.has_cgroup = true;
    fds.push_back(ends.cgroup_fd);
  }
  std::string death;
  for (int attempt = 0; attempt < 2; ++attempt) {
    CollectStandby();  // the server's answer to the last request comes before this one's
    if (ServerExited()) death = LoseServer("", /*kill=*/false);  // since the last trial: a new one replaces it
    CS_RETURN_IF_ERROR(StartServer());                           // also one that CollectStandby() had to kill
    if (standby_) {
      if (std::optional<StartedChild> woke = WakeStandby(request, fds)) return *woke;
    }
    std::string reply;
    const Status sent = SendForkRequest(socket_.get(), request, fds);
    const std::string silent =
        sent.ok() ? Await(kReplyTimeout, /*note_slow_load=*/false, &reply) : "";  // alive, but no answer
    if (sent.ok() && silent.empty() && !reply.empty()) {
      char* rest = nullptr;
      const long value = std::strtol(reply.c_str(), &rest, 10);
      if (value > 0) return StartedChild{static_cast<pid_t>(value), std::strtoll(rest, nullptr, 10)};
      return Status::RuntimeError("the fork server could not fork the trial: " +
                                  std::string(std::strerror(static_cast<int>(-value))));
    }
    // No answer: the server died, hangs or is stopped. Whatever it took with it, the next one
    // starts clean; the trial is started there, its time counted from then.
    death = LoseServer(silent, /*kill=*/!sent.ok() || !silent.empty());
  }
  return Status::RuntimeError("the fork server died twice in a row while starting the trial (" + death + ")");
}

Result<std::unique_ptr<TrialProcess>> ForkServerLauncher::Start(const LaunchSpec& spec) {
  Result<std::unique_ptr<TrialProcess>> trial =
      StartChildTrial(spec, children_, clock_, [this, &spec](const ChildEnds& ends) { return Fork(spec, ends); });
  RequestStandby();  // the next trial's process, forked while this one runs; its answer is read then
  return trial;
}

}  // namespace cleansweep
