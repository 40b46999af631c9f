#include "launch/child_registry.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "launch/child_process.hpp"
#include "util/unique_fd.hpp"

namespace cleansweep {
namespace {

// Process groups the guard keeps at once: a worker runs one trial and at most one helper.
constexpr int kGuardSlots = 64;

// The guard's last act: cgroup.kill in every trial cgroup below `base`, then removes them. Runs in
// a forked child, so it builds paths in fixed buffers.
void KillCgroupsBelow(const char* base) {
  for (int round = 0; round < 50; ++round) {
    DIR* dir = ::opendir(base);
    if (!dir) return;
    bool left = false;
    while (const dirent* entry = ::readdir(dir)) {
      if (entry->d_type != DT_DIR || entry->d_name[0] == '.') continue;
      char path[4096];
      std::snprintf(path, sizeof path, "%s/%s/cgroup.kill", base, entry->d_name);
      const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
      if (fd >= 0) {
        (void)!::write(fd, "1", 1);
        ::close(fd);
      }
      std::snprintf(path, sizeof path, "%s/%s", base, entry->d_name);
      if (::rmdir(path) != 0) left = true;  // busy until its processes are gone
    }
    ::closedir(dir);
    if (!left) break;
    ::usleep(20'000);
  }
  ::rmdir(base);
}

// The guard process: async-signal-safe calls only (the worker has MPI threads). Its own session,
// so signals meant for the job's process groups pass it by. It learns of each group through the
// pipe (+pid: started, -pid: ended) and, when the worker's end closes, kills those still there.
[[noreturn]] void RunGuard(int in, const ForkContext& fork, const char* cgroup_base) {
  ::setsid();
  ::prctl(PR_SET_NAME, "cs-trial-guard");  // what ps and top show for it
  for (int fd = 0; fd < fork.max_fd; ++fd) {
    if (fd != in) ::close(fd);
  }
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGPIPE, SIGQUIT}) ::sigaction(sig, &ignore, nullptr);
  pid_t groups[kGuardSlots] = {};
  pid_t message;
  while (ReadRetry(in, &message, sizeof message) == static_cast<ssize_t>(sizeof message)) {
    for (pid_t& g : groups) {
      if (message > 0 && g == 0) {
        g = message;
        break;
      }
      if (message < 0 && g == -message) {
        g = 0;
        break;
      }
    }
  }
  for (pid_t g : groups) {
    if (g > 0) ::kill(-g, SIGKILL);  // the worker is gone: so are its trials
  }
  if (cgroup_base[0] != 0) KillCgroupsBelow(cgroup_base);  // and all they started
  ::_exit(0);
}

}  // namespace

ChildRegistry::~ChildRegistry() {
  ReleaseCgroups();
  if (guard_fd_ >= 0) ::close(guard_fd_);
}

Status ChildRegistry::AdoptOrphans() {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    return Status::RuntimeError(std::string("prctl(PR_SET_CHILD_SUBREAPER): ") + std::strerror(errno));
  }
  subreaper_ = true;
  return Status::Ok();
}

std::string ChildRegistry::UseCgroups() {
  std::string why;
  cgroups_ = SetUpCgroupBase("/proc", &why);
  if (!cgroups_) return "process groups (" + why + "), memory limit as RLIMIT_DATA";
  return std::string("a cgroup v2 per trial, memory limit as ") +
         (cgroups_->memory ? "cgroup v2 memory.max" : "RLIMIT_DATA (no memory controller delegated here)");
}

void ChildRegistry::ReleaseCgroups() {
  if (cgroups_) RemoveCgroupBase(*cgroups_);
  cgroups_.reset();
}

Status ChildRegistry::StartGuard() {
  if (guard_pid_ > 0) return Status::Ok();
  UniqueFd read_end, write_end;
  if (const int e = MakeHighPipe(&read_end, &write_end); e != 0) {
    return Status::RuntimeError(std::string("pipe for the trial guard: ") + std::strerror(e));
  }
  ::fcntl(read_end.get(), F_SETFL, 0);
  const std::string cgroup_base = cgroups_ ? cgroups_->dir : "";
  const ForkContext fork = BeforeFork();
  const pid_t pid = ::fork();
  if (pid < 0) return Status::RuntimeError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) RunGuard(read_end.get(), fork, cgroup_base.c_str());
  guard_pid_ = pid;
  guard_fd_ = write_end.release();
  return Status::Ok();
}

void ChildRegistry::TellGuard(pid_t message) const {
  if (guard_fd_ >= 0) WriteAll(guard_fd_, reinterpret_cast<const char*>(&message), sizeof message);
}

void ChildRegistry::TrackTrial(pid_t group) {
  trials_.insert(group);
  TellGuard(group);
}

void ChildRegistry::UntrackTrial(pid_t group) {
  trials_.erase(group);
  TellGuard(-group);
}

void ChildRegistry::KeepHelper(pid_t pid) {
  helpers_.insert(pid);
  TellGuard(pid);
}

void ChildRegistry::ForgetHelper(pid_t pid) {
  helpers_.erase(pid);
  TellGuard(-pid);
}

bool ChildRegistry::Known(pid_t pid) const { return pid == guard_pid_ || trials_.count(pid) || helpers_.count(pid); }

Result<std::optional<TrialCgroup>> ChildRegistry::NewTrialCgroup(std::int64_t memory_limit) {
  if (!cgroups_) return std::optional<TrialCgroup>();
  Result<TrialCgroup> cgroup =
      TrialCgroup::Create(*cgroups_, "trial-" + std::to_string(cgroup_serial_++), memory_limit);
  if (!cgroup.ok()) return cgroup.status();
  return std::optional<TrialCgroup>(std::move(*cgroup));
}

void ChildRegistry::KillStrays() {
  if (!subreaper_) return;
  const pid_t self = ::getpid();
  for (int round = 0; round < 64; ++round) {  // killing one may hand us its children
    std::vector<pid_t> strays;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
      const std::string name = entry.path().filename().string();
      if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
      const auto pid = static_cast<pid_t>(std::stol(name));
      if (Known(pid)) continue;
      const std::optional<ProcessStat> stat = ReadProcessStat(pid);
      if (stat && stat->ppid == self) strays.push_back(pid);
    }
    if (strays.empty()) return;
    for (pid_t pid : strays) {
      const pid_t group = ::getpgid(pid);
      if (group > 0 && group != ::getpgrp()) ::kill(-group, SIGKILL);
      ::kill(pid, SIGKILL);
    }
    for (pid_t pid : strays) {
      int status;
      RetryOnEintr([&] { return ::waitpid(pid, &status, 0); });
    }
  }
}

void ChildRegistry::ReapStrayZombies() {
  for (int i = 0; i < 4096; ++i) {
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) return;
    if (trials_.count(info.si_pid) || helpers_.count(info.si_pid)) return;
    int status;
    ::waitpid(info.si_pid, &status, WNOHANG);
  }
}

std::optional<ProcessStat> ReadProcessStat(pid_t pid) {
  char buf[512];
  UniqueFd fd(::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC));
  const ssize_t n = fd.valid() ? ReadRetry(fd.get(), buf, sizeof buf - 1) : -1;
  if (n <= 0) return std::nullopt;
  buf[n] = 0;
  const char* after_name = std::strrchr(buf, ')');  // the name may hold spaces and parentheses
  ProcessStat stat;
  int ppid = 0;
  if (!after_name || std::sscanf(after_name + 1, " %c %d", &stat.state, &ppid) != 2) return std::nullopt;
  stat.ppid = ppid;
  return stat;
}

}  // namespace cleansweep
