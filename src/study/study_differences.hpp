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

}  // namespace cleansweep
