#include "samplers/sampler.hpp"

#include "samplers/grid_sampler.hpp"
#include "samplers/random_sampler.hpp"
#include "samplers/tpe_sampler.hpp"

namespace cleansweep {

Result<std::unique_ptr<Sampler>> MakeSampler(const StudyConfig& config) {
  const SamplerOptions& options = config.sampler;
  if (options.kind == "random") {
    return std::unique_ptr<Sampler>(std::make_unique<RandomSampler>(config.space, options.seed));
  }
  if (options.kind == "grid") {
    Result<std::unique_ptr<GridSampler>> grid = GridSampler::Create(config.space, config.source, options.seed);
    if (!grid.ok()) return grid.status();
    return std::unique_ptr<Sampler>(std::move(*grid));
  }
  if (options.kind == "tpe") {
    return std::unique_ptr<Sampler>(std::make_unique<TpeSampler>(config.space, options, config.study.direction));
  }
  return Status::InvalidInput("sampler.kind: unknown sampler '" + options.kind + "'");
}

}  // namespace cleansweep
