// The steps every child we start takes between fork and running the trial (or the fork server),
// shared by SpawnLauncher, the fork server and its launcher. Async-signal-safe: the parent may have
// threads (MPI's), so nothing here allocates or takes a lock.
#pragma once

#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace cleansweep {

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

}  // namespace cleansweep
