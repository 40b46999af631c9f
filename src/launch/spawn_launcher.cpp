#include "launch/spawn_launcher.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

#include "launch/child_process.hpp"
#include "launch/output_capture.hpp"
#include "launch/trial_cgroup.hpp"
#include "util/clock.hpp"
#include "util/unique_fd.hpp"

extern char** environ;

namespace cleansweep {
namespace {

using Clock = std::chrono::steady_clock;

// Process groups of live trials: the stray sweep leaves them alone. Lock-free, as the guard's pipe.
constexpr int kMaxLiveTrials = 64;
std::atomic<pid_t> g_live_groups[kMaxLiveTrials];

// Where trial cgroups go, when SpawnLauncher::UseCgroups() found cgroup v2 usable.
std::optional<CgroupBase> g_cgroups;
std::atomic<std::int64_t> g_cgroup_serial{0};

// Helper children that are not trials (fork servers): never swept as strays.
constexpr int kMaxHelpers = 8;
std::atomic<pid_t> g_helpers[kMaxHelpers];

bool IsHelper(pid_t pid) {
  for (auto& slot : g_helpers) {
    if (slot.load() == pid) return true;
  }
  return false;
}

// The guard process (SpawnLauncher::StartGuard) learns of every group through this pipe.
int g_guard_fd = -1;
pid_t g_guard_pid = -1;
bool g_subreaper = false;

void TellGuard(pid_t group) {
  if (g_guard_fd >= 0) WriteAll(g_guard_fd, reinterpret_cast<const char*>(&group), sizeof group);
}

void TrackGroup(pid_t group) {
  for (auto& slot : g_live_groups) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, group)) break;
  }
  TellGuard(group);
}

void UntrackGroup(pid_t group) {
  for (auto& slot : g_live_groups) {
    pid_t expected = group;
    if (slot.compare_exchange_strong(expected, 0)) break;
  }
  TellGuard(-group);
}

bool IsTrackedGroup(pid_t pid) {
  for (auto& slot : g_live_groups) {
    if (slot.load() == pid) return true;
  }
  return false;
}

// Our children that are neither a running trial nor the guard: with PR_SET_CHILD_SUBREAPER those
// are descendants of ended trials that had left their process group.
std::vector<pid_t> StrayChildren() {
  std::vector<pid_t> strays;
  const pid_t self = ::getpid();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    if (pid == g_guard_pid || IsTrackedGroup(pid) || IsHelper(pid)) continue;
    const std::optional<ProcessStat> stat = ReadProcessStat(pid);
    if (stat && stat->ppid == self) strays.push_back(pid);
  }
  return strays;
}

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

// Kills every stray child and its group, and reaps them, until none is left (killing one may
// hand us its children).
void SweepStrays() {
  if (!g_subreaper) return;
  for (int round = 0; round < 64; ++round) {
    const std::vector<pid_t> strays = StrayChildren();
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

// Reaps exited children of ours that are not trials: descendants of ended trials that came back to
// us as a subreaper and died. Cheap (no /proc scan); stops at a trial's own exit, left to its owner.
void ReapStrayZombies() {
  for (int i = 0; i < 4096; ++i) {
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) return;
    if (IsTrackedGroup(info.si_pid) || IsHelper(info.si_pid)) return;
    int status;
    ::waitpid(info.si_pid, &status, WNOHANG);
  }
}

// A pipe whose ends sit at fd >= 10 (so the child's dup2 onto 0..3 never collides), close-on-exec,
// the read end non-blocking.
Status MakePipe(UniqueFd* read_end, UniqueFd* write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return Status::RuntimeError(std::string("pipe: ") + std::strerror(errno));
  UniqueFd r(fds[0]), w(fds[1]);
  *read_end = UniqueFd(::fcntl(r.get(), F_DUPFD_CLOEXEC, 10));
  *write_end = UniqueFd(::fcntl(w.get(), F_DUPFD_CLOEXEC, 10));
  if (!read_end->valid() || !write_end->valid())
    return Status::RuntimeError(std::string("fcntl: ") + std::strerror(errno));
  ::fcntl(read_end->get(), F_SETFL, O_NONBLOCK);
  return Status::Ok();
}

struct ChildSetup {
  char** argv;
  char** envp;
  ChildEnds ends;
  pid_t parent;
  int max_fd;
};

class SpawnedTrial : public TrialProcess {
 public:
  SpawnedTrial(const LaunchSpec& spec, OutputCapture capture) : spec_(spec), capture_(std::move(capture)) {
    outcome_.start_time = UnixNow();  // again once the process exists
  }
  int ProcessGroup() const override { return static_cast<int>(pid_); }
  ~SpawnedTrial() override {
    if (pid_ > 0 && !finished_) {
      KillAll();
      int status;
      ::waitpid(pid_, &status, 0);
      UntrackGroup(pid_);
    }
  }

  // Starts the child through `start`, then takes it over: its group, its exit, its setup errors.
  Status Spawn(const ChildStarter& start, UniqueFd* out_w, UniqueFd* report_w, UniqueFd* control_r);
  void FailToStart(const std::string& reason);

  void Poll(Millis max_wait, std::vector<StepValue>* steps) override;
  bool Finished() const override { return finished_; }
  void Stop(TrialState state, const std::string& reason) override;
  void Kill(TrialState state, const std::string& reason) override;
  void RequestPrune(const std::string& reason, Millis grace) override;
  const TrialOutcome& Outcome() const override { return outcome_; }

  UniqueFd out_r, report_r, control_w;
  std::optional<TrialCgroup> cgroup_;  // set before Spawn where cgroup v2 is usable

 private:
  void KillAll();                                     // SIGKILL to its process group and its cgroup
  bool Drain(int fd, std::vector<StepValue>* steps);  // false at EOF
  void Reap(int status, const rusage& usage, std::vector<StepValue>* steps);
  Millis UntilNextDeadline() const;
  void EnforceDeadlines();

  LaunchSpec spec_;
  OutputCapture capture_;
  ProtocolParser reports_;
  TrialOutcome outcome_;
  Clock::time_point started_;          // its timeout counts from here: the process exists
  std::int64_t inherited_rss_kb_ = 0;  // StartedChild
  std::optional<Clock::time_point> term_sent_;
  std::optional<Clock::time_point> prune_deadline_;
  std::string prune_reason_;
  std::optional<TrialState> stop_state_;
  std::string stop_reason_;
  pid_t pid_ = -1;
  UniqueFd pidfd_;
  bool finished_ = false;
  bool killed_ = false;
};

// The child's side of Spawn(), between fork and exec: async-signal-safe calls only (the worker
// has MPI threads). Never returns; on failure it writes errno to the error pipe and exits 127.
[[noreturn]] void ExecTrial(const ChildSetup& c) {
  BecomeTrial(c.ends, c.parent, c.max_fd);  // the error pipe stays, close-on-exec
  ::execve(c.argv[0], c.argv, c.envp);
  ChildFailed(c.ends.error_fd);
}

Status SpawnedTrial::Spawn(const ChildStarter& start, UniqueFd* out_w, UniqueFd* report_w, UniqueFd* control_r) {
  UniqueFd error_r, error_w;
  CS_RETURN_IF_ERROR(MakePipe(&error_r, &error_w));
  ::fcntl(error_r.get(), F_SETFL, 0);  // we block on it until the child runs the trial
  ChildEnds ends;
  ends.out_fd = out_w->get();
  ends.report_fd = report_w->get();
  ends.control_fd = control_r->get();
  ends.error_fd = error_w.get();
  ends.cgroup_fd = cgroup_ ? cgroup_->procs_fd() : -1;
  ends.memory_limit = cgroup_ && cgroup_->memory_limited() ? 0 : spec_.memory_limit_bytes;
  Result<StartedChild> child = start(ends);
  out_w->Reset();  // the child holds the write ends now; we must not, or EOF never comes
  report_w->Reset();
  control_r->Reset();
  error_w.Reset();
  if (!child.ok()) return child.status();
  // Its time starts now, not before a fork server that may have kept us waiting.
  started_ = Clock::now();
  outcome_.start_time = UnixNow();
  pid_ = child->pid;
  inherited_rss_kb_ = child->inherited_rss_kb;
  ::setpgid(pid_, pid_);  // also here, so a kill(-pid) right away cannot miss
  TrackGroup(pid_);
  int exec_errno = 0;
  if (ReadRetry(error_r.get(), &exec_errno, sizeof exec_errno) == static_cast<ssize_t>(sizeof exec_errno)) {
    int status;
    RetryOnEintr([&] { return ::waitpid(pid_, &status, 0); });
    UntrackGroup(pid_);
    pid_ = -1;
    FailToStart("cannot start " + spec_.argv[0] + ": " + std::strerror(exec_errno) +
                (spec_.memory_limit_bytes > 0 && exec_errno == ENOMEM ? " (trial.memory_limit is too low)" : ""));
    return Status::Ok();
  }
  pidfd_ = UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0)));  // -1 on old kernels: we poll
  return Status::Ok();
}

// SpawnLauncher's way to start a child: fork, then execve in the child.
Result<pid_t> ForkExec(const LaunchSpec& spec, const ChildEnds& ends) {
  // Everything the child needs is made before fork: it may not allocate.
  std::vector<char*> argv;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = TrialEnvironment(spec.env);
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  ChildSetup c;
  c.argv = argv.data();
  c.envp = envp.data();
  c.ends = ends;
  c.parent = ::getpid();
  c.max_fd = static_cast<int>(std::min<rlim_t>(files.rlim_cur, 65536));
  const pid_t pid = ::fork();
  if (pid == 0) ExecTrial(c);
  if (pid < 0) return Status::RuntimeError(std::string("fork: ") + std::strerror(errno));
  return pid;
}

void SpawnedTrial::FailToStart(const std::string& reason) {
  finished_ = true;
  outcome_.state = TrialState::kFail;
  outcome_.reason = reason;
  outcome_.end_time = UnixNow();
  capture_.Write(reason.data(), reason.size());
  capture_.Close();
}

bool SpawnedTrial::Drain(int fd, std::vector<StepValue>* steps) {
  std::array<char, 65536> buf;
  for (int rounds = 0; rounds < 64; ++rounds) {  // bounded, so a flood cannot starve the worker
    const ssize_t n = ReadRetry(fd, buf.data(), buf.size());
    if (n == 0) return false;
    if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK;
    const auto size = static_cast<size_t>(n);
    if (fd == out_r.get()) {
      capture_.Write(buf.data(), size);
    } else {
      const bool had_error = reports_.error().has_value();
      reports_.Feed(buf.data(), size, steps);
      if (!had_error && reports_.error()) Stop(TrialState::kFail, "protocol error: " + *reports_.error());
    }
  }
  return true;
}

Millis SpawnedTrial::UntilNextDeadline() const {
  std::optional<Clock::time_point> next;
  if (term_sent_ && !killed_)
    next = *term_sent_ + spec_.kill_grace;
  else if (!term_sent_ && spec_.timeout)
    next = started_ + *spec_.timeout;
  if (!term_sent_ && prune_deadline_ && (!next || *prune_deadline_ < *next)) next = prune_deadline_;
  if (!next) return Millis::max();
  return std::max(Millis(0), std::chrono::duration_cast<Millis>(*next - Clock::now()) + Millis(1));
}

void SpawnedTrial::EnforceDeadlines() {
  const auto now = Clock::now();
  if (!term_sent_ && spec_.timeout && now >= started_ + *spec_.timeout) {
    Stop(TrialState::kTimeout, "ran past its timeout of " + FormatDuration(*spec_.timeout));
  }
  if (!term_sent_ && prune_deadline_ && now >= *prune_deadline_) {
    Stop(TrialState::kPruned, prune_reason_ + "; it did not stop within the prune grace, so it was killed");
  }
  if (term_sent_ && !killed_ && now >= *term_sent_ + spec_.kill_grace) {
    KillAll();
    killed_ = true;
  }
}

void SpawnedTrial::Stop(TrialState state, const std::string& reason) {
  if (finished_ || term_sent_) return;
  stop_state_ = state;
  stop_reason_ = reason;
  term_sent_ = Clock::now();
  ::kill(-pid_, SIGTERM);
  if (spec_.kill_grace.count() == 0) {
    KillAll();
    killed_ = true;
  }
}

void SpawnedTrial::KillAll() {
  ::kill(-pid_, SIGKILL);
  if (cgroup_) cgroup_->KillAll();
}

void SpawnedTrial::Kill(TrialState state, const std::string& reason) {
  if (finished_ || killed_) return;
  if (!term_sent_) {
    stop_state_ = state;
    stop_reason_ = reason;
    term_sent_ = Clock::now();
  }
  KillAll();
  killed_ = true;
}

void SpawnedTrial::RequestPrune(const std::string& reason, Millis grace) {
  if (finished_ || term_sent_ || prune_deadline_) return;
  prune_reason_ = reason;
  prune_deadline_ = Clock::now() + grace;
  static const char kLine[] = "prune\n";
  // The control pipe is empty and the trial may have closed it; neither blocks nor kills us
  // (the worker ignores SIGPIPE).
  if (control_w.valid() && ::write(control_w.get(), kLine, sizeof kLine - 1) < 0) control_w.Reset();
}

void SpawnedTrial::Reap(int status, const rusage& usage, std::vector<StepValue>* steps) {
  // Take what is still buffered in the pipes, then make sure nothing of the group survives.
  while (out_r.valid() && Drain(out_r.get(), steps)) {
    pollfd p{out_r.get(), POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) break;
  }
  while (report_r.valid() && Drain(report_r.get(), steps)) {
    pollfd p{report_r.get(), POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) break;
  }
  KillAll();  // the cgroup also holds what left the group
  UntrackGroup(pid_);
  MemoryCap memory;
  memory.limit_bytes = spec_.memory_limit_bytes;
  memory.how = cgroup_ && cgroup_->memory_limited() ? "cgroup v2 memory.max" : "RLIMIT_DATA";
  memory.inherited_kb = inherited_rss_kb_;
  if (cgroup_) {  // the kernel knows the whole tree: wait for it to be gone, reaping what comes back to us
    for (int i = 0; i < 200; ++i) {
      ReapStrayZombies();
      if (cgroup_->WaitEmpty(0)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ReapStrayZombies();
    memory.oom_kills = cgroup_->OomKills();
    cgroup_.reset();  // removes it
  } else {
    SweepStrays();  // no cgroup: find what left the group by its parent, a /proc scan
  }
  reports_.Finish(steps);
  out_r.Reset();
  report_r.Reset();
  pidfd_.Reset();
  capture_.Close();
  finished_ = true;
  outcome_.end_time = UnixNow();
  outcome_.peak_rss_kb = usage.ru_maxrss;
  if (WIFSIGNALED(status)) {
    outcome_.signal = WTERMSIG(status);
    outcome_.exit_code = -1;
  } else {
    outcome_.exit_code = WEXITSTATUS(status);
  }
  outcome_.output_tail = capture_.TailLines();
  control_w.Reset();
  // A trial told to stop that exits by itself is pruned all the same.
  if (!stop_state_ && prune_deadline_) {
    stop_state_ = TrialState::kPruned;
    stop_reason_ = prune_reason_;
  }
  ClassifyOutcome(reports_, stop_state_, stop_reason_, memory, &outcome_);
  if (!capture_.write_error().empty()) {  // the outcome stands; the user learns the log is short
    outcome_.reason += (outcome_.reason.empty() ? "" : "; ") + capture_.write_error();
  }
}

void SpawnedTrial::Poll(Millis max_wait, std::vector<StepValue>* steps) {
  if (finished_) return;
  EnforceDeadlines();
  std::array<pollfd, 3> fds{};
  nfds_t n = 0;
  for (int fd : {out_r.get(), report_r.get(), pidfd_.get()}) {
    if (fd >= 0) fds[n++] = pollfd{fd, POLLIN, 0};
  }
  Millis wait = std::min(max_wait, UntilNextDeadline());
  if (!pidfd_.valid()) wait = std::min(wait, Millis(20));  // no pidfd: notice the exit by polling
  const int rc = ::poll(fds.data(), n, static_cast<int>(wait.count()));
  if (rc > 0) {
    for (nfds_t i = 0; i < n; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (fds[i].fd == pidfd_.get()) continue;
      if (!Drain(fds[i].fd, steps)) (fds[i].fd == out_r.get() ? out_r : report_r).Reset();  // EOF
    }
  }
  int status = 0;
  rusage usage{};
  const pid_t r = RetryOnEintr([&] { return ::wait4(pid_, &status, WNOHANG, &usage); });
  if (r == pid_)
    Reap(status, usage, steps);
  else
    EnforceDeadlines();
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

Status SpawnLauncher::AdoptOrphans() {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    return Status::RuntimeError(std::string("prctl(PR_SET_CHILD_SUBREAPER): ") + std::strerror(errno));
  }
  g_subreaper = true;
  return Status::Ok();
}

std::string SpawnLauncher::UseCgroups() {
  std::string why;
  g_cgroups = SetUpCgroupBase("/proc", &why);
  if (!g_cgroups) return "process groups (" + why + "), memory limit as RLIMIT_DATA";
  return std::string("a cgroup v2 per trial, memory limit as ") +
         (g_cgroups->memory ? "cgroup v2 memory.max" : "RLIMIT_DATA (no memory controller delegated here)");
}

void SpawnLauncher::ReleaseCgroups() {
  if (g_cgroups) RemoveCgroupBase(*g_cgroups);
  g_cgroups.reset();
}

Status SpawnLauncher::StartGuard() {
  if (g_guard_pid > 0) return Status::Ok();
  UniqueFd read_end, write_end;
  CS_RETURN_IF_ERROR(MakePipe(&read_end, &write_end));
  ::fcntl(read_end.get(), F_SETFL, 0);
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  const int max_fd = static_cast<int>(std::min<rlim_t>(files.rlim_cur, 65536));
  const int in = read_end.get();
  const std::string cgroup_base = g_cgroups ? g_cgroups->dir : "";
  const pid_t pid = ::fork();
  if (pid < 0) return Status::RuntimeError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // The guard: async-signal-safe calls only. Its own session, so signals meant for the job's
    // process groups pass it by; it ends when the worker's end of the pipe closes.
    ::setsid();
    ::prctl(PR_SET_NAME, "cs-trial-guard");  // what ps and top show for it
    for (int fd = 0; fd < max_fd; ++fd) {
      if (fd != in) ::close(fd);
    }
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGPIPE, SIGQUIT}) ::sigaction(sig, &ignore, nullptr);
    pid_t groups[kMaxLiveTrials] = {};
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
    if (!cgroup_base.empty()) KillCgroupsBelow(cgroup_base.c_str());  // and all they started
    ::_exit(0);
  }
  g_guard_pid = pid;
  g_guard_fd = write_end.get();
  (void)write_end.release();
  return Status::Ok();
}

void KeepHelperChild(pid_t pid) {
  TellGuard(pid);
  for (auto& slot : g_helpers) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, pid)) return;
  }
}

void ForgetHelperChild(pid_t pid) {
  TellGuard(-pid);
  for (auto& slot : g_helpers) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

void KillStrayChildren() { SweepStrays(); }

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

Result<std::unique_ptr<TrialProcess>> StartChildTrial(const LaunchSpec& spec, const ChildStarter& start) {
  std::error_code ec;
  const std::filesystem::path dir(spec.trial_dir);
  const bool new_root = !std::filesystem::exists(dir.parent_path(), ec);
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IoError(spec.trial_dir + ": cannot create the trial folder: " + ec.message());
  // Others may read what trials leave, never write it, whatever the umask.
  for (const std::filesystem::path& made : {dir, new_root ? dir.parent_path() : dir}) {
    std::filesystem::permissions(made, std::filesystem::perms::group_write | std::filesystem::perms::others_write,
                                 std::filesystem::perm_options::remove, ec);
  }
  Result<OutputCapture> capture =
      OutputCapture::Open(spec.trial_dir + "/log.txt", spec.log_limit_bytes, spec.tail_lines);
  if (!capture.ok()) return capture.status();
  auto trial = std::make_unique<SpawnedTrial>(spec, std::move(*capture));
  if (g_cgroups) {
    Result<TrialCgroup> cgroup =
        TrialCgroup::Create(*g_cgroups, "trial-" + std::to_string(g_cgroup_serial++), spec.memory_limit_bytes);
    if (!cgroup.ok()) return cgroup.status();
    trial->cgroup_ = std::move(*cgroup);
  }
  UniqueFd out_w, report_w, control_r;
  CS_RETURN_IF_ERROR(MakePipe(&trial->out_r, &out_w));
  CS_RETURN_IF_ERROR(MakePipe(&trial->report_r, &report_w));
  CS_RETURN_IF_ERROR(MakePipe(&control_r, &trial->control_w));  // the trial's end reads without blocking
  CS_RETURN_IF_ERROR(trial->Spawn(start, &out_w, &report_w, &control_r));
  return std::unique_ptr<TrialProcess>(std::move(trial));
}

Result<std::unique_ptr<TrialProcess>> SpawnLauncher::Start(const LaunchSpec& spec) {
  return StartChildTrial(spec, [&spec](const ChildEnds& ends) -> Result<StartedChild> {
    CS_ASSIGN_OR_RETURN(const pid_t pid, ForkExec(spec, ends));
    return StartedChild{pid, 0};
  });
}

}  // namespace cleansweep
