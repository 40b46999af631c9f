#include "coordinator/loop_watchdog.hpp"

#include <cstdio>

namespace cleansweep {
namespace {

std::string SecondsText(std::chrono::steady_clock::duration d) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", std::chrono::duration<double>(d).count());
  return text;
}

}  // namespace

LoopWatchdog::LoopWatchdog(std::function<void(const std::string&)> say, Millis threshold)
    : say_(std::move(say)), threshold_(threshold) {
  if (threshold_ > Millis(0)) thread_ = std::thread([this] { Watch(); });
}

LoopWatchdog::~LoopWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LoopWatchdog::Busy(std::string what) {
  std::lock_guard<std::mutex> lock(mutex_);
  what_ = std::move(what);
  if (!turn_start_) {
    turn_start_ = SteadyClock::now();
    next_warning_ = threshold_;
    warned_ = false;
  }
}

void LoopWatchdog::Idle() {
  std::string line;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (turn_start_ && warned_) {
      line = "rank 0 goes on: that turn of its loop took " + SecondsText(SteadyClock::now() - *turn_start_) +
             " (last seen " + warned_what_ + ")";
    }
    turn_start_.reset();
  }
  if (!line.empty()) say_(line);
}

void LoopWatchdog::Watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    // Wakes when the next line is due, or (idle: a turn may start at any moment) every quarter
    // threshold, so a slow turn is reported at most a quarter late.
    const auto due = turn_start_ ? *turn_start_ + next_warning_ : SteadyClock::now() + threshold_ / 4;
    wake_.wait_until(lock, due);
    if (stop_ || !turn_start_ || SteadyClock::now() < *turn_start_ + next_warning_) continue;
    const std::string line = "rank 0 is still in one turn of its loop after " +
                             SecondsText(SteadyClock::now() - *turn_start_) + ", " + what_ +
                             ": no trial is handed out or recorded until it ends";
    warned_ = true;
    warned_what_ = what_;
    next_warning_ *= 2;
    lock.unlock();  // the line may block (a full pipe): the loop must not wait on it
    say_(line);
    lock.lock();
  }
}

}  // namespace cleansweep
