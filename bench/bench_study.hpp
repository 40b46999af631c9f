// The study the coordinator benchmarks run (coordinator_bench, scale_sim): a typical training
// search space with a parameter of each kind, a trial command that is never run.
#pragma once

#include <cstdint>
#include <string>

namespace cleansweep::bench {

inline std::string BenchStudyYaml(const std::string& name, const std::string& direction, std::int64_t n_trials,
                                  const std::string& storage, const std::string& sampler) {
  return "study: {name: " + name + ", direction: " + direction + ", n_trials: " + std::to_string(n_trials) +
         ", storage: " + storage + "}\nsampler: " + sampler +
         "\ntrial: {command: [true]}\n"
         "space:\n"
         "  lr: {type: float, low: 1.0e-5, high: 1.0, log: true}\n"
         "  layers: {type: int, low: 1, high: 8}\n"
         "  optimizer: {type: categorical, choices: [sgd, adam, adamw]}\n"
         "  dropout: {type: float, low: 0.0, high: 0.5}\n";
}

}  // namespace cleansweep::bench
