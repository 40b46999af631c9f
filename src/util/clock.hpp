// The clock behind an interface, so time-driven decisions (time budget, ETA, trial deadlines) can be
// tested without waiting.
#pragma once

#include <chrono>

namespace cleansweep {

// Seconds since the Unix epoch, from the system clock: the one place that reads it.
inline double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since the Unix epoch.
  virtual double Now() const = 0;
  // Seconds on a clock that never jumps (deadlines; the wall clock may be set back). Only
  // differences mean anything. A test clock's own time serves.
  virtual double Monotonic() const { return Now(); }
};

class SystemClock : public Clock {
 public:
  double Now() const override { return UnixNow(); }
  double Monotonic() const override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  }
  // One for whoever is given no clock of their own.
  static const SystemClock* Get() {
    static const SystemClock clock;
    return &clock;
  }
};

}  // namespace cleansweep
