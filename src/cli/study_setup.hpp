// The checks `validate` and `run` share: a config that passes them starts a sweep.
#pragma once

#include <memory>
#include <string>

#include "config/study_config.hpp"
#include "samplers/sampler.hpp"

namespace cleansweep {

struct PreparedStudy {
  StudyConfig config;
  std::unique_ptr<Sampler> sampler;
  std::string program;  // trial.command[0], resolved on this node
};

// Loads the config, builds its sampler, finds the trial program and refuses an existing study file.
// Every failure is InvalidInput.
Result<PreparedStudy> PrepareStudy(const std::string& config_path, const std::vector<std::string>& sets);

}  // namespace cleansweep
