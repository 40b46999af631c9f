// The checks `validate`, `run` and `resume` share: a config that passes them starts (or continues)
// a sweep.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "config/study_config.hpp"
#include "samplers/sampler.hpp"
#include "study/siblings.hpp"
#include "study/study_file.hpp"

namespace cleansweep {

struct PreparedStudy {
  StudyConfig config;
  std::unique_ptr<Sampler> sampler;
  std::string program;                    // trial.command[0], resolved on this node
  std::optional<StudyData> prior;         // set when continuing an existing study file
  std::vector<WarmStartFile> warm_start;  // study.warm_start, read and filtered to the space
};

enum class StudyMode {
  kNew,          // refuse an existing study file
  kNewOrResume,  // `run --resume`: continue the file if it exists, else start it
  kResume,       // `resume STUDY`: the file must exist; its stored config is the base
  kCheck,        // `validate`: the config alone; an existing study file is neither refused nor read
};

// Loads the config (for kResume: the one stored in `path`, a study file), applies `sets`, builds
// its sampler, finds the trial program and checks the study file against the mode: a study that
// is continued must hold the same objective and search space unless `force` (and even then the
// same parameter names and column types), and must not be in use. Every failure is InvalidInput.
Result<PreparedStudy> PrepareStudy(const std::string& path, const std::vector<std::string>& sets, StudyMode mode,
                                   bool force);

// A new study's trial-folder root that already exists holds an earlier study's folders (its file
// was deleted): renames it to ROOT.orphaned-YYYYmmddTHHMMSSZ, so no trial finds another study's
// checkpoint or log. Returns the new name, or "" when there was nothing to move.
Result<std::string> MoveAsideStaleTrialFolders(const std::string& trials_root);

}  // namespace cleansweep
