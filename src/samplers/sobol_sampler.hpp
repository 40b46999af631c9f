// Scrambled Sobol' points: trial n gets point n of a low-discrepancy sequence, so any number of
// concurrent workers get well-spread, non-overlapping suggestions without looking at results.
// Scrambling (a random linear matrix scramble and digital shift per dimension, seeded) keeps the
// sequence's net structure and removes its bias towards the corners. Up to 21 parameters.
#pragma once

#include <array>
#include <vector>

#include "samplers/sampler.hpp"

namespace cleansweep {

class SobolSampler : public Sampler {
 public:
  static constexpr int kMaxDimensions = 21;

  // InvalidInput when the space has more than kMaxDimensions non-fixed parameters.
  static Result<std::unique_ptr<SobolSampler>> Create(const SearchSpace& space, std::uint64_t seed, bool scramble);

  std::optional<ParamSet> Ask(std::int64_t number, const TrialHistory& history) override;

  // Point `index` in [0, 1)^dimensions; exposed for tests.
  std::vector<double> Point(std::uint64_t index) const;
  // The parameters at `u` (one coordinate per non-fixed parameter of `space`, in order, each in
  // [0, 1)): every parameter keeps its own coordinate, inactive ones are left out.
  static ParamSet ParamsAt(const SearchSpace& space, const std::vector<double>& u);

 private:
  SearchSpace space_;
  std::vector<std::array<std::uint32_t, 32>> directions_;  // per dimension, scrambled
  std::vector<std::uint32_t> shifts_;
};

}  // namespace cleansweep
