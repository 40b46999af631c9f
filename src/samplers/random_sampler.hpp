#pragma once

#include "samplers/sampler.hpp"
#include "util/random.hpp"

namespace cleansweep {

// Independent uniform draws (log-uniform for log parameters). Trial n's parameters depend only on
// (seed, n), so a sweep is reproducible whatever order the workers finish in.
class RandomSampler : public Sampler {
 public:
  RandomSampler(SearchSpace space, std::uint64_t seed) : space_(std::move(space)), seed_(seed) {}

  std::optional<ParamSet> Ask(std::int64_t number, const TrialHistory& history) override;

  // One draw of every active parameter from `rng`; used by other samplers for start-up trials.
  static ParamSet Draw(const SearchSpace& space, SplitMix64& rng);
  // The same draw with the inactive parameters kept: what a parameter that a choice fixed
  // elsewhere makes active takes (SearchSpace::Complete's fallback). Active ones equal Draw's.
  static ParamSet DrawEvery(const SearchSpace& space, SplitMix64& rng);

 private:
  SearchSpace space_;
  std::uint64_t seed_;
};

}  // namespace cleansweep
