#include "config/sampler_choice.hpp"

#include "config/study_config.hpp"

namespace cleansweep {

namespace {

// The dimensions the GP models for `space`: one per numeric or categorical parameter, and one more
// for a conditional numeric parameter (the indicator that says whether it is active).
int ModelDimensions(const SearchSpace& space) {
  int dims = 0;
  for (const ParamSpec& p : space.params()) {
    if (p.kind == ParamKind::kFixed) continue;
    dims += 1;
    if (p.kind != ParamKind::kCategorical && SearchSpace::IsConditional(p)) dims += 1;
  }
  return dims;
}

}  // namespace

SamplerChoice ChooseSampler(const StudyConfig& config) {
  const std::int64_t trials = config.study.n_trials;
  const std::string budget = std::to_string(trials) + " trials";
  if (config.study.multi_objective()) {
    const std::string metrics = std::to_string(config.study.metrics.size()) + " metrics, " + budget;
    if (trials < kAutoNsga2MinTrials) {
      return {"tpe", "auto: " + metrics + " (multi-objective TPE below " + std::to_string(kAutoNsga2MinTrials) +
                         " trials, NSGA-II from there)"};
    }
    return {"nsga2", "auto: " + metrics + " (NSGA-II from " + std::to_string(kAutoNsga2MinTrials) +
                         " trials, multi-objective TPE below)"};
  }
  const int dims = ModelDimensions(config.space);
  const std::string shape = std::to_string(dims) + (dims == 1 ? " dimension, " : " dimensions, ") + budget;
  if (config.space.params().empty()) {
    return {"tpe",
            "auto: the trial defines its parameters as it runs (no space:), which TPE samples one by one "
            "from the trials that had them"};
  }
  if (dims == 0) return {"tpe", "auto: nothing to search (every parameter is fixed)"};
  if (trials > kAutoGpMaxTrials) {
    return {"tpe", "auto: " + shape + " (the GP for up to " + std::to_string(kAutoGpMaxTrials) + " trials)"};
  }
  if (dims > kAutoGpMaxDimensions) {
    return {"tpe", "auto: " + shape + " (the GP for up to " + std::to_string(kAutoGpMaxDimensions) + " dimensions)"};
  }
  return {"gp", "auto: " + shape + " (the GP for up to " + std::to_string(kAutoGpMaxDimensions) + " dimensions and " +
                    std::to_string(kAutoGpMaxTrials) + " trials)"};
}

}  // namespace cleansweep
