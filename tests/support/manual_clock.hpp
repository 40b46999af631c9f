// A Clock that says what it is set to: tests move time on instead of waiting for it.
#pragma once

#include <atomic>

#include "util/clock.hpp"
#include "util/duration.hpp"

namespace cleansweep::testing {

class ManualClock : public Clock {
 public:
  explicit ManualClock(double start = 1000.0) : now_(start) {}
  double Now() const override { return now_.load(); }
  void Advance(Millis by) { now_ = now_.load() + static_cast<double>(by.count()) / 1e3; }

 private:
  std::atomic<double> now_;
};

}  // namespace cleansweep::testing
