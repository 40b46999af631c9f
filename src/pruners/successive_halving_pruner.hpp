#pragma once

#include <functional>
#include <limits>

#include "pruners/pruner.hpp"

namespace cleansweep {

// Asynchronous successive halving (ASHA; Li et al. 2020), as Optuna's SuccessiveHalvingPruner:
// rung r sits at step min_resource * reduction_factor^(min_early_stopping_rate + r). A trial that
// reaches a rung goes on only if its value there is within the best 1/reduction_factor of all
// trials that reached the rung so far (at least the best one always goes on). Its value at a rung
// is the one it reported at the first step at or past the rung. Rungs at or past max_resource (when
// set) prune nothing: such a trial is about to finish.
//
// With `resume` (pruner.resume) it is the promotion form of ASHA: a trial that is not in the best
// 1/reduction_factor when it reaches a rung pauses there (it is judged at the highest rung a report
// reaches, if one report passes several); a paused trial is promoted -- it goes on from its
// checkpoint -- once it is within the best 1/reduction_factor of the trials at its rung, which
// happens as more trials arrive there. Its rung is the highest one its reports reached.
class SuccessiveHalvingPruner : public Pruner {
 public:
  // `peers` says which trials compete with each other (Hyperband's brackets); all do by default.
  SuccessiveHalvingPruner(PrunerOptions options, Direction direction, int min_early_stopping_rate,
                          std::function<bool(std::int64_t, std::int64_t)> peers = nullptr);
  std::optional<std::string> ShouldPrune(std::int64_t number, std::int64_t step, const Curves& curves) override;
  bool Pauses() const override { return options_.resume; }
  std::optional<Promotion> Promote(const Curves& curves) const override;
  // Promote() among `paused` only, which must all be peers of each other (one Hyperband bracket).
  std::optional<Promotion> PromoteAmong(const Curves& curves, const std::vector<std::int64_t>& paused) const;

 private:
  // No rung sits at or past this step: rung steps grow by reduction_factor (>= 2) from
  // min_resource (>= 1), so there are at most 63 rungs, whatever step a trial reports.
  static constexpr std::int64_t kNoRung = std::numeric_limits<std::int64_t>::max();
  // The step of `rung`; kNoRung where it would pass INT64_MAX - 1.
  std::int64_t RungStep(int rung) const;
  // Whether a rung at `rung_step` decides anything: it exists and lies below max_resource, when
  // that is set. Every loop over rungs ends at the first rung that does not decide.
  bool Decides(std::int64_t rung_step) const;
  // The highest deciding rung `curve` reached (its last step is at or past it); -1 for none.
  int HighestRung(const TrialCurve& curve) const;
  // The values of the trials that compete with `number` at the rung at `rung_step`, partitioned
  // so that the first Keep() of them are the best and [Keep() - 1] is the worst of those (a full
  // sort on every report cost as much as the rest of the coordinator at 20,000 trials).
  std::vector<double> Competing(std::int64_t number, std::int64_t rung_step, const Curves& curves) const;
  // How many of `competing` (best first) go on past the rung: the best 1/reduction_factor, at least 1.
  size_t Keep(const std::vector<double>& competing) const;

  PrunerOptions options_;
  Direction direction_;
  int min_early_stopping_rate_;
  std::function<bool(std::int64_t, std::int64_t)> peers_;
};

}  // namespace cleansweep
