#include "launch/child_trial.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <thread>

#include "launch/output_capture.hpp"
#include "util/unique_fd.hpp"

namespace cleansweep {
namespace {

double Seconds(Millis d) { return static_cast<double>(d.count()) / 1e3; }

Status Pipe(UniqueFd* read_end, UniqueFd* write_end) {
  const int e = MakeHighPipe(read_end, write_end);
  return e == 0 ? Status::Ok() : Status::RuntimeError(std::string("pipe: ") + std::strerror(e));
}

class ChildTrial : public TrialProcess {
 public:
  ChildTrial(const LaunchSpec& spec, OutputCapture capture, ChildRegistry* children, const Clock* clock)
      : spec_(spec), capture_(std::move(capture)), reports_(spec.metrics), children_(children), clock_(clock) {
    outcome_.start_time = clock_->Now();  // again once the process exists
  }
  int ProcessGroup() const override { return static_cast<int>(pid_); }
  ~ChildTrial() override {
    if (pid_ > 0 && !finished_) {
      KillAll();
      int status;
      ::waitpid(pid_, &status, 0);
      children_->UntrackTrial(pid_);
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
  Delivery Answer(const std::string& line) override;
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
  ChildRegistry* children_;
  const Clock* clock_;
  double started_ = 0;                 // Monotonic(): its timeout counts from here, the process exists
  std::int64_t inherited_rss_kb_ = 0;  // StartedChild
  std::optional<double> term_sent_;
  std::optional<double> prune_deadline_;
  std::string prune_reason_;
  std::optional<TrialState> stop_state_;
  std::string stop_reason_;
  pid_t pid_ = -1;
  UniqueFd pidfd_;
  bool finished_ = false;
  bool killed_ = false;
};

Status ChildTrial::Spawn(const ChildStarter& start, UniqueFd* out_w, UniqueFd* report_w, UniqueFd* control_r) {
  UniqueFd error_r, error_w;
  CS_RETURN_IF_ERROR(Pipe(&error_r, &error_w));
  ::fcntl(error_r.get(), F_SETFL, 0);  // we block on it until the child runs the trial
  ChildEnds ends;
  ends.out_fd = out_w->get();
  ends.report_fd = report_w->get();
  ends.control_fd = control_r->get();
  ends.error_fd = error_w.get();
  ends.cgroup_fd = cgroup_ ? cgroup_->procs_fd() : -1;
  ends.memory_limit = cgroup_ && cgroup_->memory_limited() ? 0 : spec_.memory_limit_bytes;
  const double call_monotonic = clock_->Monotonic();
  const double call_time = clock_->Now();
  Result<StartedChild> child = start(ends);
  out_w->Reset();  // the child holds the write ends now; we must not, or EOF never comes
  report_w->Reset();
  control_r->Reset();
  error_w.Reset();
  if (!child.ok()) return child.status();
  // A fork of our own: its time starts at the call, since on a loaded machine the program may have
  // run for a while before fork() returned here. Through a fork server it starts at the answer, not
  // before a server that may have kept us waiting (a restart, a slow prepare).
  started_ = child->forked_by_call ? call_monotonic : clock_->Monotonic();
  outcome_.start_time = child->forked_by_call ? call_time : clock_->Now();
  pid_ = child->pid;
  inherited_rss_kb_ = child->inherited_rss_kb;
  ::setpgid(pid_, pid_);  // also here, so a kill(-pid) right away cannot miss
  children_->TrackTrial(pid_);
  int exec_errno = 0;
  if (ReadRetry(error_r.get(), &exec_errno, sizeof exec_errno) == static_cast<ssize_t>(sizeof exec_errno)) {
    int status;
    RetryOnEintr([&] { return ::waitpid(pid_, &status, 0); });
    children_->UntrackTrial(pid_);
    pid_ = -1;
    FailToStart("cannot start " + spec_.argv[0] + ": " + std::strerror(exec_errno) +
                (spec_.memory_limit_bytes > 0 && exec_errno == ENOMEM ? " (trial.memory_limit is too low)" : ""));
    return Status::Ok();
  }
  pidfd_ = UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0)));  // -1 on old kernels: we poll
  return Status::Ok();
}

void ChildTrial::FailToStart(const std::string& reason) {
  finished_ = true;
  outcome_.state = TrialState::kFail;
  outcome_.reason = reason;
  outcome_.end_time = clock_->Now();
  capture_.Write(reason.data(), reason.size());
  capture_.Close();
}

bool ChildTrial::Drain(int fd, std::vector<StepValue>* steps) {
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

Millis ChildTrial::UntilNextDeadline() const {
  std::optional<double> next;
  if (term_sent_ && !killed_)
    next = *term_sent_ + Seconds(spec_.kill_grace);
  else if (!term_sent_ && spec_.timeout)
    next = started_ + Seconds(*spec_.timeout);
  if (!term_sent_ && prune_deadline_ && (!next || *prune_deadline_ < *next)) next = prune_deadline_;
  if (!next) return Millis::max();
  const double left_ms = (*next - clock_->Monotonic()) * 1e3;
  return left_ms <= 0 ? Millis(0) : Millis(static_cast<Millis::rep>(std::ceil(left_ms)) + 1);
}

void ChildTrial::EnforceDeadlines() {
  const double now = clock_->Monotonic();
  if (!term_sent_ && spec_.timeout && now >= started_ + Seconds(*spec_.timeout)) {
    Stop(TrialState::kTimeout, "ran past its timeout of " + FormatDuration(*spec_.timeout));
  }
  if (!term_sent_ && prune_deadline_ && now >= *prune_deadline_) {
    Stop(TrialState::kPruned, prune_reason_ + "; it did not stop within the prune grace, so it was killed");
  }
  if (term_sent_ && !killed_ && now >= *term_sent_ + Seconds(spec_.kill_grace)) {
    KillAll();
    killed_ = true;
  }
}

void ChildTrial::Stop(TrialState state, const std::string& reason) {
  if (finished_ || term_sent_) return;
  stop_state_ = state;
  stop_reason_ = reason;
  term_sent_ = clock_->Monotonic();
  ::kill(-pid_, SIGTERM);
  if (spec_.kill_grace.count() == 0) {
    KillAll();
    killed_ = true;
  }
}

void ChildTrial::KillAll() {
  ::kill(-pid_, SIGKILL);
  if (cgroup_) cgroup_->KillAll();
}

void ChildTrial::Kill(TrialState state, const std::string& reason) {
  if (finished_ || killed_) return;
  if (!term_sent_) {
    stop_state_ = state;
    stop_reason_ = reason;
    term_sent_ = clock_->Monotonic();
  }
  KillAll();
  killed_ = true;
}

void ChildTrial::RequestPrune(const std::string& reason, Millis grace) {
  if (finished_ || term_sent_ || prune_deadline_) return;
  prune_reason_ = reason;
  prune_deadline_ = clock_->Monotonic() + Seconds(grace);
  static const char kLine[] = "prune\n";
  // The control pipe is empty and the trial may have closed it; neither blocks nor kills us
  // (the worker ignores SIGPIPE).
  if (control_w.valid() && ::write(control_w.get(), kLine, sizeof kLine - 1) < 0) control_w.Reset();
}

TrialProcess::Delivery ChildTrial::Answer(const std::string& line) {
  if (finished_ || !control_w.valid()) return Delivery::kClosed;
  const std::string text = line + "\n";
  // Under PIPE_BUF (4096 bytes), so the write is whole or fails with EAGAIN: a trial that does not
  // read its answers fills the pipe and is failed, never waited for.
  if (text.size() > 4096) return Delivery::kFull;
  const ssize_t n = RetryOnEintr([&] { return ::write(control_w.get(), text.data(), text.size()); });
  if (n == static_cast<ssize_t>(text.size())) return Delivery::kDelivered;
  if (n < 0 && errno == EAGAIN) return Delivery::kFull;
  control_w.Reset();  // EPIPE: no process of the trial holds the read end any more
  return Delivery::kClosed;
}

void ChildTrial::Reap(int status, const rusage& usage, std::vector<StepValue>* steps) {
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
  children_->UntrackTrial(pid_);
  MemoryCap memory;
  memory.limit_bytes = spec_.memory_limit_bytes;
  memory.how = cgroup_ && cgroup_->memory_limited() ? "cgroup v2 memory.max" : "RLIMIT_DATA";
  memory.inherited_kb = inherited_rss_kb_;
  if (cgroup_) {  // the kernel knows the whole tree: wait for it to be gone, reaping what comes back to us
    for (int i = 0; i < 200; ++i) {
      children_->ReapStrayZombies();
      if (cgroup_->WaitEmpty(0)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    children_->ReapStrayZombies();
    memory.oom_kills = cgroup_->OomKills();
    if (const std::optional<double> cpu = cgroup_->CpuSeconds()) outcome_.cpu_seconds = *cpu;
    cgroup_.reset();  // removes it
  } else {
    children_->KillStrays();  // no cgroup: find what left the group by its parent, a /proc scan
  }
  reports_.Finish(steps);
  out_r.Reset();
  report_r.Reset();
  pidfd_.Reset();
  capture_.Close();
  finished_ = true;
  outcome_.end_time = clock_->Now();
  outcome_.peak_rss_kb = usage.ru_maxrss;
  // Without a cgroup: what wait4 counts, the trial and the descendants it waited for.
  if (std::isnan(outcome_.cpu_seconds)) {
    outcome_.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                           static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
  }
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
  ClassifyOutcome(reports_, stop_state_, stop_reason_, memory, &outcome_, spec_.value_required);
  if (!capture_.write_error().empty()) {  // the outcome stands; the user learns the log is short
    outcome_.reason += (outcome_.reason.empty() ? "" : "; ") + capture_.write_error();
  }
}

void ChildTrial::Poll(Millis max_wait, std::vector<StepValue>* steps) {
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

Result<std::unique_ptr<TrialProcess>> StartChildTrial(const LaunchSpec& spec, ChildRegistry* children,
                                                      const Clock* clock, const ChildStarter& start) {
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
  // The checkpoint folder exists before the trial starts (docs/checkpoints.md): a trial written
  // from the docs writes into it without creating it. What a trial left under its name that is
  // no folder (a file, a dangling link) holds no checkpoint: it makes way.
  if (const auto named = spec.env.find("CLEANSWEEP_CHECKPOINT_DIR"); named != spec.env.end()) {
    const std::filesystem::path checkpoints(named->second);
    if (std::filesystem::exists(std::filesystem::symlink_status(checkpoints, ec)) &&
        !std::filesystem::is_directory(checkpoints, ec)) {
      std::filesystem::remove(checkpoints, ec);
    }
    ec.clear();
    if (std::filesystem::create_directory(checkpoints, ec)) {
      std::filesystem::permissions(checkpoints,
                                   std::filesystem::perms::group_write | std::filesystem::perms::others_write,
                                   std::filesystem::perm_options::remove, ec);
      ec.clear();
    }
    if (ec) return Status::IoError(checkpoints.string() + ": cannot create the checkpoint folder: " + ec.message());
  }
  Result<OutputCapture> capture =
      OutputCapture::Open(spec.trial_dir + "/" + spec.log_name, spec.log_limit_bytes, spec.tail_lines);
  if (!capture.ok()) return capture.status();
  auto trial = std::make_unique<ChildTrial>(spec, std::move(*capture), children, clock);
  Result<std::optional<TrialCgroup>> cgroup = children->NewTrialCgroup(spec.memory_limit_bytes);
  if (!cgroup.ok()) return cgroup.status();
  trial->cgroup_ = std::move(*cgroup);
  UniqueFd out_w, report_w, control_r;
  CS_RETURN_IF_ERROR(Pipe(&trial->out_r, &out_w));
  CS_RETURN_IF_ERROR(Pipe(&trial->report_r, &report_w));
  CS_RETURN_IF_ERROR(Pipe(&control_r, &trial->control_w));  // the trial's end reads without blocking
  ::fcntl(trial->control_w.get(), F_SETFL, O_NONBLOCK);     // and ours never blocks on a trial that does not read
  CS_RETURN_IF_ERROR(trial->Spawn(start, &out_w, &report_w, &control_r));
  return std::unique_ptr<TrialProcess>(std::move(trial));
}

}  // namespace cleansweep
