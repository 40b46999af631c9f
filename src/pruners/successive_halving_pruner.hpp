#pragma once

#include <functional>

#include "pruners/pruner.hpp"

namespace cleansweep {

// Asynchronous successive halving (ASHA; Li et al. 2020), as Optuna's SuccessiveHalvingPruner:
// rung r sits at step min_resource * reduction_factor^(min_early_stopping_rate + r). A trial that
// reaches a rung goes on only if its value there is within the best 1/reduction_factor of all
// trials that reached the rung so far (at least the best one always goes on). Its value at a rung
// is the one it reported at the first step at or past the rung. Rungs at or past max_resource (when
// set) prune nothing: such a trial is about to finish.
class SuccessiveHalvingPruner : public Pruner {
 public:
  // `peers` says which trials compete with each other (Hyperband's brackets); all do by default.
  SuccessiveHalvingPruner(PrunerOptions options, Direction direction, int min_early_stopping_rate,
                          std::function<bool(std::int64_t, std::int64_t)> peers = nullptr);
  std::optional<std::string> ShouldPrune(std::int64_t number, std::int64_t step, const Curves& curves) override;

 private:
  std::int64_t RungStep(int rung) const;

  PrunerOptions options_;
  Direction direction_;
  int min_early_stopping_rate_;
  std::function<bool(std::int64_t, std::int64_t)> peers_;
};

}  // namespace cleansweep
