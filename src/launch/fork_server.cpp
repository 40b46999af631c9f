#include "launch/fork_server.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "launch/child_process.hpp"
#include "launch/fork_server_protocol.hpp"
#include "util/utf8.hpp"

extern char** environ;

namespace cleansweep {
namespace {

// The entry points a plugin exports (CLEANSWEEP_TRIAL_PLUGIN in <cleansweep/trial.hpp>).
using TrialMain = int (*)(int, char**);
using Prepare = int (*)();
constexpr int kPluginVersion = 1;

// A number from /proc/self/status ("VmData:", "VmRSS:"), in KiB, or 0.
std::int64_t StatusKb(const char* field) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  std::int64_t kb = 0;
  const size_t length = std::strlen(field);
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, field, length) == 0) {
      kb = std::strtoll(line + length, nullptr, 10);
      break;
    }
  }
  std::fclose(f);
  return kb;
}

// Writes the command line that ps -f and pkill -f show (`command_line` is argv's area).
void SetTitle(CommandLineArea command_line, const std::string& title) {
  if (!command_line.start || command_line.size == 0) return;
  std::memset(command_line.start, 0, command_line.size);
  std::memcpy(command_line.start, title.data(), std::min(title.size(), command_line.size - 1));
}

std::string BaseName(const std::string& path) { return path.substr(path.find_last_of('/') + 1); }

// The cloned child: becomes the trial, as a spawned one does (ExecTrial in spawn_launcher.cpp),
// then runs the plugin instead of exec'ing a program. This process is single-threaded, so unlike
// there the child may allocate.
[[noreturn]] void RunTrial(const ForkRequest& request, const ForkContext& fork, std::vector<UniqueFd>& fds,
                           TrialMain trial_main, CommandLineArea command_line) {
  ChildEnds ends;
  ends.out_fd = fds[0].get();
  ends.report_fd = fds[1].get();
  ends.control_fd = fds[2].get();
  ends.error_fd = fds[3].get();
  ends.cgroup_fd = request.has_cgroup ? fds[4].get() : -1;
  // RLIMIT_DATA counts the data the trial inherited (the loaded plugin, what prepare() made): the
  // limit is on top of it, so that trial.memory_limit caps what the trial itself allocates.
  ends.memory_limit = request.memory_limit > 0 ? request.memory_limit + StatusKb("VmData:") * 1024 : 0;
  BecomeTrial(ends, fork);
  // The trial's environment replaces the server's; the strings live as long as this process.
  static std::vector<std::string> env_strings;
  static std::vector<char*> envp;
  env_strings = request.env;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  environ = envp.data();
  std::vector<std::string> argv_strings = request.argv;
  std::vector<char*> argv;
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string name = BaseName(request.argv[0]);
  ::prctl(PR_SET_NAME, Utf8Prefix(name, 15).c_str());  // what ps and top show: the plugin
  std::string trial = "?";                             // and ps -f / pkill -f: the trial, not the server
  for (const std::string& e : request.env) {
    if (e.rfind("CLEANSWEEP_TRIAL=", 0) == 0) trial = e.substr(17);
  }
  SetTitle(command_line, "cleansweep-trial " + trial + " " + name);
  ::close(ends.error_fd);  // set up: the worker stops waiting
  const int code = trial_main(static_cast<int>(argv.size() - 1), argv.data());
  std::fflush(nullptr);
  ::_exit(code & 0xff);
}

// A standby child (trial.prefork): forked ahead, it waits on its own socket for the request of
// the trial it is to become, so that starting that trial costs the worker one message, no fork.
// Closing the worker's end of the socket dismisses it.
[[noreturn]] void RunStandby(int standby, const ForkContext& fork, TrialMain trial_main, CommandLineArea command_line,
                             const std::string& plugin) {
  ::setpgid(0, 0);  // a group of its own from the start: the worker keeps it as a helper
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != fork.parent) ::_exit(127);
  // Above all the server's socket: the worker must see EOF on it when the server dies.
  CloseFdsAbove(kTrialControlFd, standby, fork.max_fd);
  ::prctl(PR_SET_NAME, "cs-standby");
  SetTitle(command_line, "cleansweep-standby " + BaseName(plugin));
  ForkRequest request;
  std::vector<UniqueFd> fds;
  bool eof = false;
  const Status got = ReceiveForkRequest(standby, &request, &fds, &eof);
  if (eof) ::_exit(0);  // not needed after all
  if (!got.ok() || request.standby) {
    std::fprintf(stderr, "cleansweep-standby: %s\n", got.ok() ? "a standby request" : got.message().c_str());
    errno = EINVAL;
    if (fds.size() >= 4) ChildFailed(fds[3].get());  // the worker reads why on the error pipe
    ::_exit(127);
  }
  if (!SendMessage(standby, "taken").ok()) ::_exit(0);  // the worker is gone
  ::close(standby);
  RunTrial(request, fork, fds, trial_main, command_line);
}

// True when this process holds a device file of the NVIDIA driver: CUDA was initialised.
bool HoldsNvidiaDevice(std::string* which) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return false;
  bool found = false;
  while (const dirent* entry = ::readdir(dir)) {
    char link[300], target[256];
    std::snprintf(link, sizeof link, "/proc/self/fd/%s", entry->d_name);
    const ssize_t n = ::readlink(link, target, sizeof target - 1);
    if (n <= 0) continue;
    target[n] = '\0';
    if (std::strncmp(target, "/dev/nvidia", 11) == 0) {
      *which = target;
      found = true;
      break;
    }
  }
  ::closedir(dir);
  return found;
}

int ThreadCount() {
  DIR* dir = ::opendir("/proc/self/task");
  if (!dir) return 1;
  int n = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') ++n;
  }
  ::closedir(dir);
  return n;
}

int Refuse(int socket, const std::string& why) {
  std::fprintf(stderr, "cleansweep-forkserver: %s\n", why.c_str());
  (void)SendMessage(socket, "error: " + why);
  return kForkServerBadPlugin;
}

}  // namespace

int RunForkServer(int socket, const std::string& plugin, CommandLineArea command_line) {
  // Descriptors 0-4 are the trial's; fill the free ones so that no received pipe lands there.
  for (int fd = 0; fd <= kTrialControlFd; ++fd) {
    if (::fcntl(fd, F_GETFD) < 0) ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  // RTLD_NOW: a missing symbol is an error here, once, not a crash in every trial.
  void* handle = ::dlopen(plugin.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return Refuse(socket, std::string("cannot load the plugin: ") + ::dlerror());
  const auto* version = static_cast<const int*>(::dlsym(handle, "cleansweep_trial_plugin_version"));
  const auto trial_main = reinterpret_cast<TrialMain>(::dlsym(handle, "cleansweep_trial_main"));
  if (!trial_main || !version) {
    return Refuse(socket, plugin +
                              " is not a cleansweep trial plugin: it exports no cleansweep_trial_main; build it "
                              "with CLEANSWEEP_TRIAL_PLUGIN(your_main) from <cleansweep/trial.hpp>");
  }
  if (*version != kPluginVersion) {
    return Refuse(socket, plugin + " was built for plugin version " + std::to_string(*version) +
                              ", this cleansweep runs version " + std::to_string(kPluginVersion) + "; rebuild it");
  }
  if (const auto prepare = reinterpret_cast<Prepare>(::dlsym(handle, "cleansweep_trial_prepare"))) {
    const int code = prepare();
    if (code != 0) return Refuse(socket, plugin + ": cleansweep_trial_prepare() returned " + std::to_string(code));
  }
  std::string device;
  if (HoldsNvidiaDevice(&device)) {
    return Refuse(socket, plugin + " initialised CUDA while loading (the server holds " + device +
                              " open); forked trials would share that context. Move the CUDA calls from load "
                              "time and cleansweep_trial_prepare() into the trial's main");
  }
  if (const int threads = ThreadCount(); threads > 1) {
    // Not refused: the thread may never hold a lock a trial needs. But a trial that hangs on one
    // would only end at its timeout, so the user hears of it once, here.
    std::fprintf(stderr,
                 "cleansweep-forkserver: warning: %s started %d thread(s) while loading; a forked trial gets none "
                 "of them, and hangs if it needs a lock one of them held. Start threads in the trial's main\n",
                 plugin.c_str(), threads - 1);
  }
  if (!SendMessage(socket, "ready").ok()) return 1;
  for (;;) {
    ForkRequest request;
    std::vector<UniqueFd> fds;
    bool eof = false;
    const Status got = ReceiveForkRequest(socket, &request, &fds, &eof);
    if (eof) return 0;
    if (!got.ok()) {
      std::fprintf(stderr, "cleansweep-forkserver: %s\n", got.message().c_str());
      (void)SendMessage(socket, std::to_string(-EINVAL));
      continue;
    }
    std::fflush(nullptr);                               // nothing buffered may be written twice
    const std::int64_t shared_kb = StatusKb("VmRSS:");  // resident now: the child starts sharing it
    if (request.standby) {
      int pair[2];
      if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) {
        if (!SendMessage(socket, std::to_string(-errno)).ok()) return 0;
        continue;
      }
      UniqueFd worker_end(pair[0]), child_end(pair[1]);
      const ForkContext fork = BeforeFork(request.parent);
      const long pid = ::syscall(SYS_clone, CLONE_PARENT | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
      if (pid == 0) RunStandby(child_end.get(), fork, trial_main, command_line, plugin);
      const int clone_errno = errno;
      child_end.Reset();
      const Status replied =
          pid > 0 ? SendMessage(socket, std::to_string(pid) + " " + std::to_string(shared_kb), worker_end.get())
                  : SendMessage(socket, std::to_string(-clone_errno));
      if (!replied.ok()) return 0;  // the worker is gone
      continue;
    }
    // CLONE_PARENT: the worker is the child's parent, so it reaps it, reads its rusage and is
    // signalled by its exit as for a spawned trial, and the child outlives this server.
    const ForkContext fork = BeforeFork(request.parent);
    const long pid = ::syscall(SYS_clone, CLONE_PARENT | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
    if (pid == 0) RunTrial(request, fork, fds, trial_main, command_line);
    const std::string reply = pid > 0 ? std::to_string(pid) + " " + std::to_string(shared_kb) : std::to_string(-errno);
    if (!SendMessage(socket, reply).ok()) return 0;  // the worker is gone
  }
}

}  // namespace cleansweep
