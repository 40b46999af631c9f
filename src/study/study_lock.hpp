// StudyLock: one coordinator per study file. An advisory flock(2) on "<study>.lock", held for the
// life of the run; the kernel drops it when the holder dies, so a crash never leaves a stale lock.
// The file holds the holder's pid, host and start time for the message a second coordinator gets.
#pragma once

#include <string>

#include "util/status.hpp"
#include "util/unique_fd.hpp"

namespace cleansweep {

class StudyLock {
 public:
  // InvalidInput when another process holds the lock (the message says who); IoError when the
  // lock file cannot be created.
  static Result<StudyLock> Acquire(const std::string& study_path);

  StudyLock() = default;
  StudyLock(StudyLock&&) = default;
  StudyLock& operator=(StudyLock&&) = default;
  ~StudyLock();  // removes the lock file, then releases the lock

  static std::string LockPath(const std::string& study_path) { return study_path + ".lock"; }

  // Whether a coordinator holds `study_path`'s lock now (its run is going on). Probes with a
  // shared lock it lets go at once; Acquire waits out such a probe rather than refuse.
  static bool HeldNow(const std::string& study_path);

 private:
  std::string path_;
  UniqueFd fd_;
};

}  // namespace cleansweep
