#pragma once

#include <memory>
#include <vector>

#include "pruners/successive_halving_pruner.hpp"

namespace cleansweep {

// Hyperband (Li et al. 2018) over ASHA, as Optuna's HyperbandPruner: brackets b = 0..B-1 with
// B = floor(log_eta(max_resource / min_resource)) + 1; bracket b is successive halving with
// min_early_stopping_rate b, and trials compete only within their bracket. A trial's bracket is
// drawn deterministically from its number, in proportion to the number of configurations Hyperband
// starts in that bracket, so aggressive brackets get more trials.
class HyperbandPruner : public Pruner {
 public:
  HyperbandPruner(PrunerOptions options, Direction direction);
  std::optional<std::string> ShouldPrune(std::int64_t number, std::int64_t step, const Curves& curves) override;
  bool Pauses() const override { return resume_; }
  // Each bracket promotes among its own paused trials; the highest rung of them goes first.
  std::optional<Promotion> Promote(const Curves& curves) const override;

  int brackets() const { return static_cast<int>(brackets_.size()); }
  int BracketOf(std::int64_t number) const;

 private:
  std::vector<std::unique_ptr<SuccessiveHalvingPruner>> brackets_;
  std::vector<double> cumulative_;  // bracket weights, cumulative, ending at 1
  bool resume_ = false;
};

}  // namespace cleansweep
