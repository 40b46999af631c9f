// What the simulations on a virtual clock share (scale_sim, packing_sim): the clock, and the CPU
// time the coordinator really spends, which they charge to it.
#pragma once

#include <time.h>

#include <algorithm>

#include "util/clock.hpp"

namespace cleansweep::bench {

inline double ThreadCpuSeconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

class VirtualClock : public Clock {
 public:
  double Now() const override { return now_; }
  void Advance(double seconds) { now_ += seconds; }
  void Set(double t) { now_ = std::max(now_, t); }

 private:
  double now_ = 1.7e9;
};

}  // namespace cleansweep::bench
