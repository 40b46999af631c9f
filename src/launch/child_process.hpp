// The steps every child we start takes between fork and running the trial (or the fork server),
// shared by SpawnLauncher, the fork server and its launcher. Async-signal-safe: the parent may have
// threads (MPI's), so nothing here allocates or takes a lock. Header-only: the fork server links
// none of the core library.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

#include "util/unique_fd.hpp"

namespace cleansweep {

// The fds a trial finds its report pipe (CLEANSWEEP_REPORT_FD) and control pipe
// (CLEANSWEEP_CONTROL_FD) on.
inline constexpr int kTrialReportFd = 3;
inline constexpr int kTrialControlFd = 4;

// The trial's ends of its pipes and what its child process must set up before running it, for
// whatever starts that process (a fork and exec, or the fork server).
struct ChildEnds {
  int out_fd = -1;      // becomes its stdout and stderr
  int report_fd = -1;   // becomes kTrialReportFd
  int control_fd = -1;  // becomes kTrialControlFd
  // Setup failures: the child writes its errno here and exits 127. The child holds it until it
  // runs the trial (close-on-exec, or an explicit close), so EOF means it started.
  int error_fd = -1;
  int cgroup_fd = -1;             // cgroup.procs the child writes "0" to first, or -1
  std::int64_t memory_limit = 0;  // RLIMIT_DATA the child sets, or 0
};

// What a child of ours must know but may not find out itself between fork and exec (async-signal
// safety): read by its parent before the fork, at every fork site (trials, the guard, the fork
// server and the trials it forks).
struct ForkContext {
  pid_t parent = -1;  // the process whose death kills the child (PR_SET_PDEATHSIG, then checked)
  int max_fd = 0;     // where close_range is missing, fds are closed one by one up to here
};

// The fork context of a child of `parent` (this process, or the worker a fork server forks for).
inline ForkContext BeforeFork(pid_t parent = ::getpid()) {
  rlimit files{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  return ForkContext{parent, static_cast<int>(std::min<rlim_t>(files.rlim_cur, 65536))};
}

// A pipe whose ends sit at fd >= 10 (so a child's dup2 onto 0..4 never collides), close-on-exec,
// the read end non-blocking. 0, or the errno of what failed.
inline int MakeHighPipe(UniqueFd* read_end, UniqueFd* write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return errno;
  UniqueFd r(fds[0]), w(fds[1]);
  *read_end = UniqueFd(::fcntl(r.get(), F_DUPFD_CLOEXEC, 10));
  *write_end = UniqueFd(::fcntl(w.get(), F_DUPFD_CLOEXEC, 10));
  if (!read_end->valid() || !write_end->valid()) return errno;
  ::fcntl(read_end->get(), F_SETFL, O_NONBLOCK);
  return 0;
}

// Every signal back to its default action, none blocked (the worker ignores SIGPIPE and blocks
// some; a trial must start as a fresh program would).
inline void ResetSignals() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

// Closes every fd above `above` except `keep` (-1: none): close_range (Linux 5.9) where it exists,
// else one by one up to `max_fd` (with a high fd limit that loop alone costs milliseconds).
inline void CloseFdsAbove(int above, int keep, int max_fd) {
  const bool ranged = keep > above ? ::syscall(SYS_close_range, above + 1, keep - 1, 0) == 0 &&
                                         ::syscall(SYS_close_range, keep + 1, ~0U, 0) == 0
                                   : ::syscall(SYS_close_range, above + 1, ~0U, 0) == 0;
  if (ranged) return;
  for (int fd = above + 1; fd < max_fd; ++fd) {
    if (fd != keep) ::close(fd);
  }
}

// Reports errno to the parent through the error pipe and ends the child.
[[noreturn]] inline void ChildFailed(int error_fd) {
  const int e = errno;
  WriteAll(error_fd, reinterpret_cast<const char*>(&e), sizeof e);
  ::_exit(127);
}

// Makes this freshly forked process the trial `ends` describe, up to running its code: its own
// process group (a timeout kills grandchildren too), death with its parent (the worker; the check
// closes the race with a worker that died before the prctl), its cgroup (before anything it
// starts, so that is in it too; should the write fail, the group and the orphan sweep still
// track it), its memory limit, stdin from /dev/null, the pipes on fds 1-4, nothing else open but
// the error pipe, default signals.
inline void BecomeTrial(const ChildEnds& e, const ForkContext& fork) {
  ::setpgid(0, 0);
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != fork.parent) ::_exit(127);
  if (e.cgroup_fd >= 0) (void)!::write(e.cgroup_fd, "0", 1);
  if (e.memory_limit > 0) {
    const rlimit limit{static_cast<rlim_t>(e.memory_limit), static_cast<rlim_t>(e.memory_limit)};
    if (::setrlimit(RLIMIT_DATA, &limit) != 0) ChildFailed(e.error_fd);
  }
  const int null = ::open("/dev/null", O_RDONLY);
  if (null < 0 || ::dup2(null, 0) < 0 || ::dup2(e.out_fd, 1) < 0 || ::dup2(e.out_fd, 2) < 0 ||
      ::dup2(e.report_fd, kTrialReportFd) < 0 || ::dup2(e.control_fd, kTrialControlFd) < 0) {
    ChildFailed(e.error_fd);
  }
  CloseFdsAbove(kTrialControlFd, e.error_fd, fork.max_fd);
  ResetSignals();
}

}  // namespace cleansweep
