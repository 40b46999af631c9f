// `sampler: {kind: auto}`, the default: which sampler a study gets, and why. The thresholds come
// from bench/run_gp_bench.sh and bench/run_mo_bench.sh (bench/README.md, "Which sampler: auto").
#pragma once

#include <cstdint>
#include <string>

namespace cleansweep {

struct StudyConfig;

// The GP pays while the study is short: past this many trials its model keeps a subset and every
// ask costs tens of milliseconds (bench/README.md, "GP sampler"), while TPE has caught up.
inline constexpr std::int64_t kAutoGpMaxTrials = 1000;
// Model dimensions (a numeric parameter 1, a conditional numeric 2, a categorical 1) up to which
// bench/run_gp_bench.sh found the GP never worse than TPE beyond the noise (10: the widest spaces
// it measured); wider spaces get TPE.
inline constexpr int kAutoGpMaxDimensions = 10;
// Several metrics: multi-objective TPE below this many trials, NSGA-II from here on.
inline constexpr std::int64_t kAutoNsga2MinTrials = 500;

struct SamplerChoice {
  std::string kind;    // gp, tpe or nsga2
  std::string reason;  // "auto: 4 numeric dimensions, 100 trials: the GP ..."
};

// The sampler `kind: auto` stands for in `config` (its space, metrics and n_trials).
SamplerChoice ChooseSampler(const StudyConfig& config);

}  // namespace cleansweep
