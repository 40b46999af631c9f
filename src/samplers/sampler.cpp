#include "samplers/sampler.hpp"

#include "config/sampler_choice.hpp"
#include "samplers/cmaes_sampler.hpp"
#include "samplers/gp_sampler.hpp"
#include "samplers/grid_sampler.hpp"
#include "samplers/nsga2_sampler.hpp"
#include "samplers/pbt_sampler.hpp"
#include "samplers/random_sampler.hpp"
#include "samplers/sobol_sampler.hpp"
#include "samplers/tpe_sampler.hpp"

namespace cleansweep {

std::uint64_t ParamSeed(std::uint64_t seed, const std::string& name) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;  // FNV-1a
  for (const char c : name) hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return SplitMix64(seed ^ hash).Next();
}

ParamValue DrawTrialDefined(const ParamSpec& spec, std::uint64_t seed, std::int64_t number) {
  SplitMix64 rng = StreamFor(ParamSeed(seed, spec.name), static_cast<std::uint64_t>(number));
  if (spec.kind == ParamKind::kCategorical) {
    return spec.choices[static_cast<size_t>(rng.Below(spec.choices.size()))];
  }
  return SearchSpace::FromUnit(spec, rng.Uniform());
}

Result<ParamValue> Sampler::SuggestTrialDefined(std::int64_t number, const ParamSpec& spec, const ParamSet& /*asked*/,
                                                const TrialHistory& /*history*/) {
  return DrawTrialDefined(spec, trial_defined_seed_, number);
}

ParamSet CompleteEnqueued(Sampler& sampler, const StudyConfig& config, const ParamSet& fixed, std::int64_t number,
                          const TrialHistory& history) {
  const ParamSet proposal = sampler.ProposalFor(number, history);
  SplitMix64 rng = StreamFor(~config.sampler.seed, static_cast<std::uint64_t>(number));
  return SearchSpace::Complete(config.space, fixed, proposal, RandomSampler::DrawEvery(config.space, rng));
}

namespace {

Result<std::unique_ptr<Sampler>> MakeAnySampler(const StudyConfig& config) {
  SamplerOptions options = config.sampler;
  // A loaded config has resolved auto already; one built in code may still hold it.
  if (options.kind == "auto") options.kind = ChooseSampler(config).kind;
  options.design_seed = options.seed;
  if (config.study.shard.sharded() && !config.study.shard.joined) {
    options.design_offset = static_cast<std::uint64_t>(config.study.shard.index);
    options.design_stride = static_cast<std::uint64_t>(config.study.shard.count);
  }
  options.seed = ShardSeed(options.kind, options.seed, config.study.shard);
  if (config.study.shard.joined) options.design_seed = options.seed;  // no part of the design: a sequence of its own
  // Samplers that search a space they are given: with none declared (the trial defines every
  // parameter as it runs) they would search nothing (docs/samplers.md).
  if (config.space.params().empty() && (options.kind == "grid" || options.kind == "sobol" || options.kind == "cmaes" ||
                                        options.kind == "nsga2" || options.kind == "pbt")) {
    return Status::InvalidInput(config.source + ": sampler.kind: " + options.kind +
                                " searches the parameters declared under space:, and this config declares none " +
                                "(its trials define them as they run): use tpe (or random or gp), or declare the " +
                                "space");
  }
  if (options.kind == "random") {
    return std::unique_ptr<Sampler>(std::make_unique<RandomSampler>(config.space, options.seed));
  }
  if (options.kind == "grid") {
    Result<std::unique_ptr<GridSampler>> grid =
        GridSampler::Create(config.space, config.source, options.seed, config.study.shard, config.enqueue);
    if (!grid.ok()) return grid.status();
    return std::unique_ptr<Sampler>(std::move(*grid));
  }
  if (options.kind == "sobol") {
    Result<std::unique_ptr<SobolSampler>> sobol = SobolSampler::Create(config.space, options.seed, options.scramble);
    if (!sobol.ok()) return sobol.status().WithContext(config.source);
    return std::unique_ptr<Sampler>(std::move(*sobol));
  }
  if (options.kind == "cmaes") {
    return std::unique_ptr<Sampler>(std::make_unique<CmaesSampler>(config.space, options, config.study.direction));
  }
  if (options.kind == "nsga2") {
    return std::unique_ptr<Sampler>(std::make_unique<Nsga2Sampler>(config.space, options, config.study.metrics));
  }
  if (options.kind == "pbt") {
    return std::unique_ptr<Sampler>(std::make_unique<PbtSampler>(config.space, options));
  }
  if (options.kind == "gp") {
    if (config.study.multi_objective()) {
      return Status::InvalidInput("sampler.kind: gp optimises one metric; for several use nsga2 or tpe");
    }
    return std::unique_ptr<Sampler>(std::make_unique<GpSampler>(config.space, options, config.study));
  }
  if (options.kind == "tpe") {
    return std::unique_ptr<Sampler>(std::make_unique<TpeSampler>(config.space, options, config.study.metrics));
  }
  return Status::InvalidInput("sampler.kind: unknown sampler '" + options.kind + "'");
}

}  // namespace

Result<std::unique_ptr<Sampler>> MakeSampler(const StudyConfig& config) {
  Result<std::unique_ptr<Sampler>> sampler = MakeAnySampler(config);
  if (sampler.ok())
    (*sampler)->set_trial_defined_seed(ShardSeed(config.sampler.kind, config.sampler.seed, config.study.shard));
  return sampler;
}

}  // namespace cleansweep
