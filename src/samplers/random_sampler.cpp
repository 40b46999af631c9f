#include "samplers/random_sampler.hpp"

namespace cleansweep {

namespace {

ParamSet DrawParams(const SearchSpace& space, SplitMix64& rng, bool every) {
  ParamSet params;
  for (const ParamSpec& spec : space.params()) {
    const double u = rng.Uniform();  // drawn even when inactive, so streams stay aligned
    if (!every && !SearchSpace::IsActive(spec, params)) continue;
    switch (spec.kind) {
      case ParamKind::kFloat:
      case ParamKind::kInt:
        params[spec.name] = SearchSpace::FromUnit(spec, u);
        break;
      case ParamKind::kCategorical:
        params[spec.name] = spec.choices[static_cast<size_t>(u * static_cast<double>(spec.choices.size()))];
        break;
      case ParamKind::kFixed:
        params[spec.name] = spec.fixed_value;
        break;
    }
  }
  return params;
}

}  // namespace

ParamSet RandomSampler::Draw(const SearchSpace& space, SplitMix64& rng) { return DrawParams(space, rng, false); }

ParamSet RandomSampler::DrawEvery(const SearchSpace& space, SplitMix64& rng) { return DrawParams(space, rng, true); }

std::optional<ParamSet> RandomSampler::Ask(std::int64_t number, const TrialHistory& /*history*/) {
  SplitMix64 rng = StreamFor(seed_, static_cast<std::uint64_t>(number));
  return Draw(space_, rng);
}

}  // namespace cleansweep
