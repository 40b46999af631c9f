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

// The coordinator's own CPU time, charged to the virtual clock: Charge() when it hands control to
// the simulation (a Receive), Restart() when it takes it back.
class CpuCharge {
 public:
  void Charge(VirtualClock* clock) {
    const double spent = ThreadCpuSeconds() - mark_;
    clock->Advance(spent);  // what the coordinator just spent, at this machine's speed
    total_ += spent;
  }
  void Restart() { mark_ = ThreadCpuSeconds(); }
  double total() const { return total_; }

 private:
  double mark_ = ThreadCpuSeconds();
  double total_ = 0;
};

}  // namespace cleansweep::bench
