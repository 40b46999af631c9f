#pragma once

#include "samplers/sampler.hpp"

namespace cleansweep {

// Population-based training's parameters (sampler.kind: pbt; its schedule is PbtPruner's). The
// population's first members are drawn at random, as RandomSampler does. A member that replaces
// another starts from a top member's checkpoint with that member's parameters explored: each
// numeric one, with probability resample_probability, drawn afresh, else multiplied by one of
// `perturb`'s factors (drawn uniformly) and put back on its range and step; each categorical one
// drawn afresh with that probability, else moved to a neighbouring choice. Fixed values stay;
// parameters a changed choice makes active are drawn at random, inactive ones dropped.
class PbtSampler : public Sampler {
 public:
  PbtSampler(SearchSpace space, SamplerOptions options) : space_(std::move(space)), options_(std::move(options)) {}

  std::optional<ParamSet> Ask(std::int64_t number, const TrialHistory& history) override;
  std::optional<ParamSet> Derive(std::int64_t number, const ParamSet& parent) override;
  std::optional<std::int64_t> FreshLimit() const override { return options_.population; }

 private:
  SearchSpace space_;
  SamplerOptions options_;
};

}  // namespace cleansweep
