#include "launch/fork_server_launcher.hpp"

#include <fcntl.h>
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
#include "launch/fork_server_protocol.hpp"

namespace cleansweep {
namespace {

constexpr int kServerSocketFd = 3;       // where the server finds its end of the socket
constexpr int kReplyTimeoutMs = 60'000;  // a fork takes milliseconds; a minute means it hangs

std::string DescribeStatus(int status) {
  if (WIFSIGNALED(status))
    return std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" + ::strsignal(WTERMSIG(status)) +
           ")";
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

ForkServerLauncher::ForkServerLauncher(std::string server, std::string plugin, Millis load_timeout)
    : server_(std::move(server)), plugin_(std::move(plugin)), load_timeout_(load_timeout) {}

ForkServerLauncher::~ForkServerLauncher() {
  socket_.Reset();  // EOF: the server returns
  if (server_pid_ > 0) (void)BuryServer();
}

std::string ForkServerLauncher::BuryServer() {
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
  ForgetHelperChild(server_pid_);
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
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  const int max_fd = static_cast<int>(std::min<rlim_t>(files.rlim_cur, 65536));
  const pid_t parent = ::getpid();
  const int socket_fd = theirs.get();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Async-signal-safe calls only, up to execve. Its own process group: a Ctrl-C for the job is
    // not for it; it dies with the worker.
    ::setpgid(0, 0);
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(127);
    const int null = ::open("/dev/null", O_RDONLY);
    if (null < 0 || ::dup2(null, 0) < 0 || ::dup2(2, 1) < 0 || ::dup2(socket_fd, kServerSocketFd) < 0) ::_exit(127);
    // dup2 onto itself keeps close-on-exec: the socket would not survive the execve.
    if (socket_fd == kServerSocketFd) ::fcntl(kServerSocketFd, F_SETFD, 0);
    CloseFdsAbove(kServerSocketFd, -1, max_fd);
    ResetSignals();
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  if (pid < 0) return Status::RuntimeError(std::string("fork: ") + std::strerror(errno));
  theirs.Reset();
  server_pid_ = pid;
  KeepHelperChild(pid);
  socket_ = std::move(ours);
  std::string hello;
  const Status got = ReceiveMessage(socket_.get(), static_cast<int>(load_timeout_.count()), &hello);
  if (got.ok() && hello == "ready") return Status::Ok();
  std::string why;
  if (!got.ok()) {
    why = got.message() + " while loading the plugin";
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

Result<pid_t> ForkServerLauncher::Fork(const LaunchSpec& spec, const ChildEnds& ends) {
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
    CS_RETURN_IF_ERROR(StartServer());
    std::string reply;
    Status sent = SendForkRequest(socket_.get(), request, fds);
    if (sent.ok()) sent = ReceiveMessage(socket_.get(), kReplyTimeoutMs, &reply);
    if (sent.ok() && !reply.empty()) {
      const long value = std::strtol(reply.c_str(), nullptr, 10);
      if (value > 0) return static_cast<pid_t>(value);
      return Status::RuntimeError("the fork server could not fork the trial: " +
                                  std::string(std::strerror(static_cast<int>(-value))));
    }
    // No answer: the server died (or hangs). Whatever it took with it, the next one starts clean.
    if (server_pid_ > 0 && !sent.ok()) ::kill(server_pid_, SIGKILL);
    const pid_t pid = server_pid_;
    death = BuryServer();
    server_died_ = true;
    std::fprintf(stderr, "cleansweep: warning: the fork server (pid %d, %s) %s; starting a new one\n",
                 static_cast<int>(pid), plugin_.c_str(), death.c_str());
  }
  return Status::RuntimeError("the fork server died twice in a row while starting the trial (" + death + ")");
}

Result<std::unique_ptr<TrialProcess>> ForkServerLauncher::Start(const LaunchSpec& spec) {
  return StartChildTrial(spec, [this, &spec](const ChildEnds& ends) { return Fork(spec, ends); });
}

}  // namespace cleansweep
