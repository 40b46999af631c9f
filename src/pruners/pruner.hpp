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
  std::int64_t checkpoint_step = -1;  // the last step whose checkpoint it declared; -1 for none
};
using Curves = std::map<std::int64_t, TrialCurve>;  // by trial number

// A paused trial that may go on (pruner.resume), and why. With a `parent` (population-based
// training), the paused trial ends instead and a new trial takes its place, starting from the
// parent's checkpoint of `parent_step` with parameters derived from the parent's.
struct Promotion {
  std::int64_t number = -1;
  int rung = 0;
  std::int64_t rung_step = 0;  // the step of the rung (PBT: of the check) it paused at
  std::string reason;
  std::int64_t parent = -1;
  std::int64_t parent_step = -1;
};

class Pruner {
 public:
  virtual ~Pruner() = default;
  // Called after trial `number` reported `step` (already in `curves`). Returns why it should stop,
  // or nullopt to let it go on.
  virtual std::optional<std::string> ShouldPrune(std::int64_t number, std::int64_t step, const Curves& curves) = 0;

  // pruner.resume: a trial ShouldPrune() stops pauses at its rung rather than ending there, and
  // Promote() later says which paused trial may go on. False for pruners without rungs.
  virtual bool Pauses() const { return false; }
  // Among the trials paused at a rung (TrialState::kPaused in `curves`), one that may go on now:
  // the highest rung first, then the best value there; nullopt when none may (yet).
  virtual std::optional<Promotion> Promote(const Curves& /*curves*/) const { return std::nullopt; }
  // Whether a free worker continues a paused trial before it starts a new one (ASHA); PBT first
  // starts its whole population, so that its members move on together.
  virtual bool PromotesFirst() const { return true; }
};

// nullptr for `pruner.kind: none`.
std::unique_ptr<Pruner> MakePruner(const PrunerOptions& options, Direction direction);

}  // namespace cleansweep
