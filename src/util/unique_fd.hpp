// RAII file descriptor and EINTR-safe wrappers for the POSIX calls we use on pipes.
#pragma once

#include <unistd.h>
#include <cerrno>

#include <utility>

namespace cleansweep {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }  // the caller owns the fd now
  void Reset() {
    if (fd_ >= 0) ::close(fd_);  // close() is not retried on EINTR on Linux: the fd is gone
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// Calls `call` again while it fails with EINTR; returns its last result (fmt's FMT_RETRY).
template <class Call>
auto RetryOnEintr(Call call) {
  auto result = call();
  while (result < 0 && errno == EINTR) result = call();
  return result;
}

// read(2) retried on EINTR.
inline ssize_t ReadRetry(int fd, void* buf, size_t n) {
  return RetryOnEintr([&] { return ::read(fd, buf, n); });
}

// Writes all of `data` (blocking fds), retrying on EINTR and short writes; false on error.
inline bool WriteAll(int fd, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t w = RetryOnEintr([&] { return ::write(fd, data, n); });
    if (w <= 0) return false;
    data += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

}  // namespace cleansweep
