// What rank 0 shows while a sweep runs: a live status line on a terminal, or one line per
// finished trial when stdout is a file or pipe (Slurm output files, CI logs).
#pragma once

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>

#include "config/study_config.hpp"
#include "trial/trial_record.hpp"

namespace cleansweep {

struct ProgressState {
  std::int64_t done = 0;
  std::int64_t done_before = 0;  // finished in earlier runs of a resumed study
  std::int64_t total = 0;
  std::int64_t running = 0;
  std::int64_t failed = 0;  // finished in any state but COMPLETE and PRUNED
  std::optional<double> best_value;
  std::int64_t best_number = -1;
  std::optional<std::int64_t> front_size;  // a multi-metric study: trials on its Pareto front
  double elapsed_s = 0;
};

// Thread-safe: the coordinator's loop watchdog prints through it too (loop_watchdog.hpp).
class Progress {
 public:
  // `live` redraws one line in place (use it when `out` is a terminal).
  Progress(std::FILE* out, bool live, const StudyConfig& config);

  void Message(const std::string& text);  // a line of its own, e.g. "no GPU: trials run on CPU"
  void TrialFinished(const TrialRecord& record, const ProgressState& state);
  void Tick(const ProgressState& state);  // redraws the live line; no-op when not live
  void Finish(const ProgressState& state);

  // "[ 5/12]"
  static std::string Counter(const ProgressState& state);
  // "running 2 failed 0 best 0.8512 (#3) elapsed 1m02s ETA 1m30s"
  static std::string StatusLine(const ProgressState& state);
  static std::string TrialLine(const TrialRecord& record, const StudyConfig& config);

 private:
  void ClearLive();

  std::FILE* out_;
  bool live_;
  const StudyConfig& config_;
  bool live_drawn_ = false;
  std::mutex mutex_;  // one line at a time, the live line's state with it
};

}  // namespace cleansweep
