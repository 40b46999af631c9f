// The wall clock behind an interface, so scheduling decisions (time budget, ETA) can be tested.
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
};

class SystemClock : public Clock {
 public:
  double Now() const override { return UnixNow(); }
  // One for whoever is given no clock of their own.
  static const SystemClock* Get() {
    static const SystemClock clock;
    return &clock;
  }
};

}  // namespace cleansweep
