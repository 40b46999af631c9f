// A slow file system for one process (LD_PRELOAD=libslow_io.so): every read(), pread() and
// pread64() of a file whose path contains $SLOW_IO_MATCH first sleeps $SLOW_IO_MS milliseconds, as
// a busy NFS server or a loaded Lustre OST makes a reader wait. Other files, and every write, are
// untouched. Used by tests/reliability/reliability_test.sh (sharing_slow).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static void slow_if_matched(int fd) {
  const char* match = getenv("SLOW_IO_MATCH");
  const char* ms = getenv("SLOW_IO_MS");
  if (!match || !*match || !ms) return;
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return;
  path[n] = '\0';
  if (!strstr(path, match)) return;
  const long wait_ms = atol(ms);
  struct timespec t = {wait_ms / 1000, (wait_ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0) {
  }
}

ssize_t read(int fd, void* buf, size_t count) {
  static ssize_t (*real)(int, void*, size_t);
  if (!real) real = (ssize_t(*)(int, void*, size_t))dlsym(RTLD_NEXT, "read");
  slow_if_matched(fd);
  return real(fd, buf, count);
}

ssize_t pread(int fd, void* buf, size_t count, off_t offset) {
  static ssize_t (*real)(int, void*, size_t, off_t);
  if (!real) real = (ssize_t(*)(int, void*, size_t, off_t))dlsym(RTLD_NEXT, "pread");
  slow_if_matched(fd);
  return real(fd, buf, count, offset);
}

ssize_t pread64(int fd, void* buf, size_t count, off64_t offset) {
  static ssize_t (*real)(int, void*, size_t, off64_t);
  if (!real) real = (ssize_t(*)(int, void*, size_t, off64_t))dlsym(RTLD_NEXT, "pread64");
  slow_if_matched(fd);
  return real(fd, buf, count, offset);
}
