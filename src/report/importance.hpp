// Parameter importance by functional ANOVA over a random forest (fANOVA: Hutter, Hoos and
// Leyton-Brown, "An Efficient Approach for Assessing Hyperparameter Importance", ICML 2014), the
// method behind Optuna's default importance evaluator. A forest of regression trees is fitted to
// the objective of the completed trials; for each tree, the variance of the objective over the
// whole (normalised) search space is split exactly into the part explained by each parameter
// alone, and a parameter's importance is its share, averaged over the trees and normalised to
// sum to 1. Pure: no I/O.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/study_config.hpp"
#include "trial/trial_record.hpp"

namespace cleansweep {

struct ParamImportance {
  std::string name;
  double importance = 0;  // share of the objective's variance it explains alone, normalised
};

struct ImportanceResult {
  std::vector<ParamImportance> params;  // most important first; empty when too few trials
  std::vector<std::string> skipped;     // parameters not evaluated, with why ("momentum: conditional")
  std::int64_t trials_used = 0;
  std::string note;  // why there is no result, when params is empty
};

struct ForestOptions {
  int trees = 64;
  int min_samples_leaf = 1;
  int max_depth = 64;
  std::int64_t max_trials = 2000;  // the most recent completed trials, to bound the cost
  std::uint64_t seed = 0;
};

// Parameters that are active in every trial and vary are evaluated; conditional ones (inactive
// in some trials) and fixed ones are listed in `skipped`, as Optuna restricts itself to the
// parameters all trials share. Floats and ints are placed on [0, 1] (logarithmically when `log`),
// categorical values on equal cells of [0, 1] in config order. Needs at least 4 completed trials.
ImportanceResult FanovaImportance(const StudyConfig& config, const std::vector<TrialRecord>& trials,
                                  const ForestOptions& options = {});

}  // namespace cleansweep
