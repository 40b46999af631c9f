// The wall clock behind an interface, so scheduling decisions (time budget, ETA) can be tested.
#pragma once

#include <chrono>

namespace cleansweep {

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since the Unix epoch.
  virtual double Now() const = 0;
};

class SystemClock : public Clock {
 public:
  double Now() const override {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  }
};

}  // namespace cleansweep
