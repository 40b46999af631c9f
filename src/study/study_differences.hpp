// Whether a config still describes a stored study: what `run --resume`, `resume --set` and
// `merge` check before they put trials of one definition next to trials of another.
#pragma once

#include <string>
#include <vector>

#include "config/study_config.hpp"

namespace cleansweep {

// The differences in objective and search space between a stored study and a new config, one
// line each ("param lr: was float [1e-05, 0.1] log, now float [1e-05, 1] log"); empty if none.
// `breaking` is set when a difference changes the study file's columns, which no force allows.
std::vector<std::string> StudyDifferences(const StudyConfig& stored, const StudyConfig& now, bool* breaking);

// Why two study files are not parts of one sweep, one line each, naming `b_path`'s value first
// ("study.n_trials is 200, but A has 100"); empty when they are. Parts of one sweep share the
// name, n_trials, sampler kind and seed, the enqueued configurations' count, the objective and
// the search space; they differ in study.shard, and the array's shard count may differ from a
// joined shard's (`shard_count`: whether it must agree too, as for merging an array alone).
std::vector<std::string> SweepDifferences(const StudyConfig& a, const std::string& a_path, const StudyConfig& b,
                                          bool shard_count);

}  // namespace cleansweep
