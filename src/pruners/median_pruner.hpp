#pragma once

#include "pruners/pruner.hpp"

namespace cleansweep {

// Optuna's MedianPruner: stops a trial whose best value so far is worse than the median of the
// completed trials' values at the same step. No decision before n_startup_trials trials completed,
// before step n_warmup_steps, off the interval_steps grid, or with fewer than n_min_trials values
// at the step.
class MedianPruner : public Pruner {
 public:
  MedianPruner(PrunerOptions options, Direction direction) : options_(std::move(options)), direction_(direction) {}
  std::optional<std::string> ShouldPrune(std::int64_t number, std::int64_t step, const Curves& curves) override;

 private:
  PrunerOptions options_;
  Direction direction_;
};

}  // namespace cleansweep
