// Pruner: decides on rank 0 whether a running trial should stop early, from the intermediate
// values every trial has reported. Pure: no I/O, no MPI, no clock.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "config/study_config.hpp"
#include "trial/trial_record.hpp"

namespace cleansweep {

// One trial's learning curve and where it stands.
struct TrialCurve {
  std::map<std::int64_t, double> values;  // step -> reported value
  TrialState state = TrialState::kRunning;
};
using Curves = std::map<std::int64_t, TrialCurve>;  // by trial number

class Pruner {
 public:
  virtual ~Pruner() = default;
  // Called after trial `number` reported `step` (already in `curves`). Returns why it should stop,
  // or nullopt to let it go on.
  virtual std::optional<std::string> ShouldPrune(std::int64_t number, std::int64_t step, const Curves& curves) = 0;
};

// nullptr for `pruner.kind: none`.
std::unique_ptr<Pruner> MakePruner(const PrunerOptions& options, Direction direction);

}  // namespace cleansweep
