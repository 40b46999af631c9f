// Rank 0 never goes silent (issue 40): a thread that watches the coordinator's loop and, when one
// turn of it (the time between two waits for messages) runs past a threshold, says what the turn
// is doing, and again at twice that, four times, ...; and once more when the turn ends. A sampler,
// a pruner or a flush that takes minutes, or never returns, shows at once instead of a sweep that
// just stops.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "util/duration.hpp"

namespace cleansweep {

class LoopWatchdog {
 public:
  // `say` prints a line; it is called from the watchdog's thread (and from Idle()'s caller).
  // A threshold of zero or less turns the watchdog off.
  LoopWatchdog(std::function<void(const std::string&)> say, Millis threshold);
  ~LoopWatchdog();  // stops and joins the thread
  LoopWatchdog(const LoopWatchdog&) = delete;
  LoopWatchdog& operator=(const LoopWatchdog&) = delete;

  // The turn is doing `what` now ("handling a report from rank 2 (trial 0, step 12)"); starts
  // the turn's clock when the loop was idle.
  void Busy(std::string what);
  // The loop waits for messages: the turn is over. Says how long it took, when it was reported.
  void Idle();

 private:
  using SteadyClock = std::chrono::steady_clock;
  void Watch();

  std::function<void(const std::string&)> say_;
  Millis threshold_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::optional<SteadyClock::time_point> turn_start_;  // unset while idle
  std::string what_;
  Millis next_warning_{0};   // how long into the turn the next line is due
  bool warned_ = false;      // this turn was reported slow
  std::string warned_what_;  // what it was doing at the last line
  std::thread thread_;
};

}  // namespace cleansweep
