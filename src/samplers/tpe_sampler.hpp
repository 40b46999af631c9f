// Tree-structured Parzen Estimator (Bergstra et al. 2011), as Optuna users know it, plus what a
// cluster needs: trials still running count as "not good" (constant liar), so that workers asking
// at once get different suggestions; trials that failed (OOM, crash, timeout, non-zero exit) count
// as the worst, so the sampler learns to avoid the region that kills them. docs/samplers.md lists
// the defaults and where they differ from Optuna's.
#pragma once

#include <vector>

#include "samplers/pareto.hpp"
#include "samplers/parzen_estimator.hpp"
#include "samplers/sampler.hpp"

namespace cleansweep {

//
// With several metrics (multi-objective TPE, Ozaki et al. 2020), the good trials are the best
// fronts of a non-dominated sort; from the front that does not fit whole, those that add the most
// hypervolume are taken, and each good trial weighs by its share of the good set's hypervolume.
class TpeSampler : public Sampler {
 public:
  TpeSampler(SearchSpace space, SamplerOptions options, std::vector<Metric> metrics);

  std::optional<ParamSet> Ask(std::int64_t number, const TrialHistory& history) override;
  bool AsksInBatches() const override { return true; }
  std::vector<ParamSet> AskBatch(const std::vector<std::int64_t>& numbers, const TrialHistory& history) override;
  // Independent TPE over the trials that had the parameter (Optuna's independent sampling): the
  // same good/other split of the history, densities of this one parameter.
  Result<ParamValue> SuggestTrialDefined(std::int64_t number, const ParamSpec& spec, const ParamSet& asked,
                                         const TrialHistory& history) override;

  // Kernels kept at most per density. Past it, the newest half is kept and the older trials are
  // thinned to every k-th with k times the weight, so the density keeps its shape while an ask
  // stays flat in the length of the study.
  static constexpr size_t kMaxKernels = 200;

 private:
  struct Split;     // the good ("below") and the other ("above") trials of one ask
  struct GroupFit;  // one group's encoded trials and the densities a batch shares
  Split SplitTrials(std::int64_t number, const TrialHistory& history) const;
  // Which ranked trials are good, as a weight per trial (0: not good): with one metric the n_below
  // lowest losses (ties: the oldest), weight 1; with several, from each trial's minimised values,
  // the best fronts, weighted by exclusive hypervolume.
  static std::vector<double> GoodByLoss(const std::vector<double>& losses, size_t n_below);
  std::vector<double> GoodByFronts(const std::vector<Point>& points, size_t n_below) const;
  ParamSet Propose(const Split& split, SplitMix64& rng) const;  // one proposal from a fitted split
  // Samples `dims_of` jointly from l(x)/g(x) over the trials that have all of them active.
  void SampleGroup(const std::vector<const ParamSpec*>& group, const Split& split, SplitMix64& rng,
                   ParamSet* out) const;

  SearchSpace space_;
  SamplerOptions options_;
  std::vector<Metric> metrics_;
};

// Independent TPE of one trial-defined parameter (TpeSampler::SuggestTrialDefined), for any
// sampler that draws such parameters as TPE does: `options` TPE's, `metrics` the study's.
Result<ParamValue> SuggestIndependentTpe(std::int64_t number, const ParamSpec& spec, const SamplerOptions& options,
                                         const std::vector<Metric>& metrics, const TrialHistory& history);

// Optuna's weights: 1 for the newest 25 observations, a linear ramp from 1/n up for older ones.
// `n` observations, ordered oldest first.
std::vector<double> TpeWeights(size_t n);

}  // namespace cleansweep
