// Configs and spaces shared by the sampler tests.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "config/study_config.hpp"

namespace cleansweep::testing {

// Every parameter kind: log float, float, stepped float, int, stepped int, log int, categorical,
// a conditional float and a fixed value.
inline const char* kEveryKindSpace = R"(  lr: {type: float, low: 1.0e-5, high: 1.0, log: true}
  x: {type: float, low: -2.0, high: 3.0}
  q: {type: float, low: 0.0, high: 1.0, step: 0.1}
  n: {type: int, low: 1, high: 6}
  c: {type: int, low: 8, high: 64, step: 8}
  b: {type: int, low: 1, high: 1024, log: true}
  opt: {type: categorical, choices: [sgd, adam, adamw]}
  m: {type: float, low: 0.0, high: 0.99, when: {opt: sgd}}
  fixed: 42
)";

// A study config with `space` (YAML lines under `space:`) and `sampler` (a YAML mapping).
inline StudyConfig SamplerConfig(const std::string& space, const std::string& sampler,
                                 const std::string& direction = "minimize") {
  Result<StudyConfig> config = LoadConfigText("study: {name: t, direction: " + direction + "}\nsampler: " + sampler +
                                                  "\ntrial: {command: [p]}\nspace:\n" + space,
                                              "t.yaml");
  EXPECT_TRUE(config.ok()) << config.status().message();
  return *config;
}

// A finished trial with these parameters and value (nullopt: none reported).
inline TrialRecord Finished(std::int64_t number, ParamSet params, std::optional<double> value,
                            TrialState state = TrialState::kComplete) {
  TrialRecord r;
  r.number = number;
  r.params = std::move(params);
  r.value = value;
  r.state = state;
  return r;
}

}  // namespace cleansweep::testing
