#include "study/study_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <thread>

namespace cleansweep {

Result<StudyLock> StudyLock::Acquire(const std::string& study_path) {
  StudyLock lock;
  lock.path_ = LockPath(study_path);
  lock.fd_ = UniqueFd(::open(lock.path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!lock.fd_.valid()) {
    return Status::IoError(lock.path_ + ": cannot create the study's lock file: " + std::strerror(errno));
  }
  int rc = RetryOnEintr([&] { return ::flock(lock.fd_.get(), LOCK_EX | LOCK_NB); });
  // A sibling shard's HeldNow() holds a shared lock for an instant: that is no coordinator.
  for (int tries = 0; rc != 0 && errno == EWOULDBLOCK && tries < 20; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    rc = RetryOnEintr([&] { return ::flock(lock.fd_.get(), LOCK_EX | LOCK_NB); });
  }
  if (rc != 0) {
    if (errno != EWOULDBLOCK) {
      return Status::IoError(lock.path_ + ": cannot lock the study (flock: " + std::strerror(errno) +
                             "); on a file system without locks, put study.storage on another one");
    }
    char holder[256] = {};
    const ssize_t n = ::pread(lock.fd_.get(), holder, sizeof holder - 1, 0);
    std::string who = n > 0 ? std::string(holder, static_cast<size_t>(n)) : "another process";
    while (!who.empty() && who.back() == '\n') who.pop_back();
    lock.path_.clear();  // not ours: the destructor must not remove it
    return Status::InvalidInput(study_path + ": the study is in use by " + who +
                                "; one coordinator per study file. Wait for it to finish, or stop it first "
                                "(a stopped or killed run is continued with: cleansweep resume " +
                                study_path + ")");
  }
  // A holder that just finished unlinks the file before it lets go; if we locked that old inode,
  // a newcomer could lock a new file at the same path. Start again on the file now there.
  struct stat held {
  }, named{};
  if (::fstat(lock.fd_.get(), &held) != 0 || ::stat(lock.path_.c_str(), &named) != 0 || held.st_ino != named.st_ino ||
      held.st_dev != named.st_dev) {
    lock.path_.clear();
    return Acquire(study_path);
  }
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  char since[32] = {};
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(since, sizeof since, "%Y-%m-%dT%H:%M:%SZ", &tm);
  const std::string text = "cleansweep pid " + std::to_string(::getpid()) + " on " + host + " since " + since + "\n";
  if (::ftruncate(lock.fd_.get(), 0) != 0 || ::pwrite(lock.fd_.get(), text.data(), text.size(), 0) < 0) {
    return Status::IoError(lock.path_ + ": cannot write the lock file: " + std::strerror(errno));
  }
  return lock;
}

bool StudyLock::HeldNow(const std::string& study_path) {
  const UniqueFd fd(::open(LockPath(study_path).c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return false;  // no lock file: nobody ever held it, or its holder finished
  if (RetryOnEintr([&] { return ::flock(fd.get(), LOCK_SH | LOCK_NB); }) != 0) return errno == EWOULDBLOCK;
  ::flock(fd.get(), LOCK_UN);  // a killed holder's file: the kernel let its lock go
  return false;
}

StudyLock::~StudyLock() {
  // Unlink while still holding the lock, so nobody can lock the old inode after we let go.
  if (fd_.valid() && !path_.empty()) ::unlink(path_.c_str());
}

}  // namespace cleansweep
