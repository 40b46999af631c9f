// Where a trial's stdout and stderr go: a log file capped at a size (its head, then a marker, then
// its tail), and the last lines kept in memory for the study file.
#pragma once

#include <cstdint>
#include <string>

#include "util/status.hpp"
#include "util/unique_fd.hpp"

namespace cleansweep {

// Creates a file of the worker's in a trial's folder, empty, for writing. The folder is the
// trial's too, so whatever the trial left under that name (a link to a file of the user's, a named
// pipe, a file from an attempt before) is removed first and the name created afresh, exclusively
// and without following links: the worker never writes through a trial's link nor waits on its pipe.
// `what` names it in errors ("PATH: cannot create the trial log: …").
Result<UniqueFd> CreateTrialFile(const std::string& path, const std::string& what);

class OutputCapture {
 public:
  static constexpr size_t kTailBytes = 64 << 10;
  static constexpr size_t kMaxLineBytes = 500;  // per line of TailLines(), cut on a character boundary

  // Creates `path` (CreateTrialFile). `limit_bytes` caps the file's head part.
  static Result<OutputCapture> Open(const std::string& path, std::int64_t limit_bytes, int tail_lines);
  // Writes to `fd`, already open (a test's /dev/full).
  static OutputCapture Writing(UniqueFd fd, std::int64_t limit_bytes, int tail_lines);

  void Write(const char* data, size_t size);
  // Writes the tail after a marker if anything was dropped, and closes the file.
  void Close();

  // The last `tail_lines` lines, each cut to kMaxLineBytes bytes (whole characters).
  std::string TailLines() const;
  // Empty, or why the log file is incomplete ("log.txt is incomplete: writing it failed after N
  // bytes (No space left on device)"): the first failed write ends writing; the tail is still kept.
  const std::string& write_error() const { return write_error_; }

 private:
  void WriteToFile(const char* data, size_t size);

  UniqueFd fd_;
  std::int64_t limit_ = 0;
  int tail_lines_ = 0;
  std::int64_t written_ = 0;     // bytes in the file's head part
  std::int64_t total_ = 0;       // bytes seen
  std::string tail_;             // the last kTailBytes..2*kTailBytes bytes seen
  std::int64_t file_bytes_ = 0;  // bytes in the file
  std::string write_error_;
};

}  // namespace cleansweep
