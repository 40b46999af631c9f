#include "samplers/pbt_sampler.hpp"

#include <cmath>

#include "samplers/random_sampler.hpp"

namespace cleansweep {

std::optional<ParamSet> PbtSampler::Ask(std::int64_t number, const TrialHistory& /*history*/) {
  SplitMix64 rng = StreamFor(options_.seed, static_cast<std::uint64_t>(number));
  return RandomSampler::Draw(space_, rng);
}

std::optional<ParamSet> PbtSampler::Derive(std::int64_t number, const ParamSet& parent) {
  SplitMix64 rng = StreamFor(options_.seed ^ 0x6578706c6f7265ULL, static_cast<std::uint64_t>(number));
  ParamSet explored;
  for (const ParamSpec& spec : space_.params()) {
    const auto it = parent.find(spec.name);
    if (it == parent.end() || spec.kind == ParamKind::kFixed) continue;
    const bool resample = rng.Uniform() < options_.resample_probability;
    if (spec.kind == ParamKind::kCategorical) {
      size_t at = 0;
      while (at < spec.choices.size() && !(spec.choices[at] == it->second)) ++at;
      if (resample || at == spec.choices.size()) {
        explored[spec.name] = spec.choices[rng.Below(spec.choices.size())];
      } else {
        const bool up = rng.Uniform() < 0.5;
        const size_t next = up ? std::min(at + 1, spec.choices.size() - 1) : (at == 0 ? 0 : at - 1);
        explored[spec.name] = spec.choices[next];
      }
      continue;
    }
    if (resample) {
      explored[spec.name] = SearchSpace::FromUnit(spec, rng.Uniform());
      continue;
    }
    const double factor = options_.perturb[rng.Below(options_.perturb.size())];
    const double x = SearchSpace::Snap(spec, AsNumber(it->second) * factor);
    explored[spec.name] =
        spec.kind == ParamKind::kInt ? ParamValue(static_cast<std::int64_t>(std::llround(x))) : ParamValue(x);
  }
  SplitMix64 fallback = StreamFor(options_.seed ^ 0x66616c6cULL, static_cast<std::uint64_t>(number));
  return SearchSpace::Complete(space_, explored, parent, RandomSampler::DrawEvery(space_, fallback));
}

}  // namespace cleansweep
