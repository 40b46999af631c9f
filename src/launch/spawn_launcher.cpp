#include "launch/spawn_launcher.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "launch/output_capture.hpp"
#include "util/unique_fd.hpp"

extern char** environ;

namespace cleansweep {
namespace {

using Clock = std::chrono::steady_clock;

// Process groups of live trials, for KillRunningTrials(); lock-free so a signal handler may read it.
constexpr int kMaxLiveTrials = 64;
std::atomic<pid_t> g_live_groups[kMaxLiveTrials];

void TrackGroup(pid_t group) {
  for (auto& slot : g_live_groups) {
    pid_t empty = 0;
    if (slot.compare_exchange_strong(empty, group)) return;
  }
}

void UntrackGroup(pid_t group) {
  for (auto& slot : g_live_groups) {
    pid_t expected = group;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

double UnixNow() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

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

class SpawnedTrial : public TrialProcess {
 public:
  SpawnedTrial(const LaunchSpec& spec, OutputCapture capture)
      : spec_(spec), capture_(std::move(capture)), started_(Clock::now()) {
    outcome_.start_time = UnixNow();
  }
  ~SpawnedTrial() override {
    if (pid_ > 0 && !finished_) {
      ::kill(-pid_, SIGKILL);
      int status;
      ::waitpid(pid_, &status, 0);
      UntrackGroup(pid_);
    }
  }

  Status Spawn(UniqueFd* out_w, UniqueFd* report_w, UniqueFd* control_r);
  void FailToStart(const std::string& reason);

  void Poll(Millis max_wait, std::vector<StepReport>* steps) override;
  bool Finished() const override { return finished_; }
  void Stop(TrialState state, const std::string& reason) override;
  void RequestPrune(const std::string& reason, Millis grace) override;
  const TrialOutcome& Outcome() const override { return outcome_; }

  UniqueFd out_r, report_r, control_w;

 private:
  bool Drain(int fd, std::vector<StepReport>* steps);  // false at EOF
  void Reap(int status, const rusage& usage, std::vector<StepReport>* steps);
  Millis UntilNextDeadline() const;
  void EnforceDeadlines();

  LaunchSpec spec_;
  OutputCapture capture_;
  ReportParser reports_;
  TrialOutcome outcome_;
  Clock::time_point started_;
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

Status SpawnedTrial::Spawn(UniqueFd* out_w, UniqueFd* report_w, UniqueFd* control_r) {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_w->get(), 1);
  posix_spawn_file_actions_adddup2(&actions, out_w->get(), 2);
  posix_spawn_file_actions_adddup2(&actions, report_w->get(), SpawnLauncher::kReportFd);
  posix_spawn_file_actions_adddup2(&actions, control_r->get(), SpawnLauncher::kControlFd);
  posix_spawn_file_actions_addclosefrom_np(&actions, SpawnLauncher::kControlFd + 1);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGCHLD, SIGHUP, SIGUSR1, SIGUSR2}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);  // its own group, so a timeout kills grandchildren too
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> argv;
  for (const std::string& a : spec_.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = TrialEnvironment(spec_.env);
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);

  const int rc = posix_spawn(&pid_, argv[0], &actions, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  out_w->Reset();  // the child holds the write ends now; we must not, or EOF never comes
  report_w->Reset();
  control_r->Reset();
  if (rc != 0) {
    pid_ = -1;
    FailToStart("cannot start " + spec_.argv[0] + ": " + std::strerror(rc));
    return Status::Ok();
  }
  TrackGroup(pid_);
  pidfd_ = UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0)));  // -1 on old kernels: we poll
  return Status::Ok();
}

void SpawnedTrial::FailToStart(const std::string& reason) {
  finished_ = true;
  outcome_.state = TrialState::kFail;
  outcome_.reason = reason;
  outcome_.end_time = UnixNow();
  capture_.Write(reason.data(), reason.size());
  capture_.Close();
}

bool SpawnedTrial::Drain(int fd, std::vector<StepReport>* steps) {
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
    ::kill(-pid_, SIGKILL);
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
    ::kill(-pid_, SIGKILL);
    killed_ = true;
  }
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

void SpawnedTrial::Reap(int status, const rusage& usage, std::vector<StepReport>* steps) {
  // Take what is still buffered in the pipes, then make sure nothing of the group survives.
  while (out_r.valid() && Drain(out_r.get(), steps)) {
    pollfd p{out_r.get(), POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) break;
  }
  while (report_r.valid() && Drain(report_r.get(), steps)) {
    pollfd p{report_r.get(), POLLIN, 0};
    if (::poll(&p, 1, 0) <= 0) break;
  }
  ::kill(-pid_, SIGKILL);
  UntrackGroup(pid_);
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
  ClassifyOutcome(reports_, stop_state_, stop_reason_, &outcome_);
}

void SpawnedTrial::Poll(Millis max_wait, std::vector<StepReport>* steps) {
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
  pid_t r;
  do {
    r = ::wait4(pid_, &status, WNOHANG, &usage);
  } while (r < 0 && errno == EINTR);
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

void SpawnLauncher::KillRunningTrials() {
  for (auto& slot : g_live_groups) {
    const pid_t group = slot.load();
    if (group > 0) ::kill(-group, SIGKILL);
  }
}

Result<std::unique_ptr<TrialProcess>> SpawnLauncher::Start(const LaunchSpec& spec) {
  std::error_code ec;
  std::filesystem::create_directories(spec.trial_dir, ec);
  if (ec) return Status::IoError(spec.trial_dir + ": cannot create the trial folder: " + ec.message());
  Result<OutputCapture> capture =
      OutputCapture::Open(spec.trial_dir + "/log.txt", spec.log_limit_bytes, spec.tail_lines);
  if (!capture.ok()) return capture.status();
  auto trial = std::make_unique<SpawnedTrial>(spec, std::move(*capture));
  UniqueFd out_w, report_w, control_r;
  CS_RETURN_IF_ERROR(MakePipe(&trial->out_r, &out_w));
  CS_RETURN_IF_ERROR(MakePipe(&trial->report_r, &report_w));
  CS_RETURN_IF_ERROR(MakePipe(&control_r, &trial->control_w));  // the trial's end reads without blocking
  CS_RETURN_IF_ERROR(trial->Spawn(&out_w, &report_w, &control_r));
  return std::unique_ptr<TrialProcess>(std::move(trial));
}

}  // namespace cleansweep
