#include "cli/study_setup.hpp"

#include <filesystem>

#include "launch/trial_command.hpp"

namespace cleansweep {

Result<PreparedStudy> PrepareStudy(const std::string& config_path, const std::vector<std::string>& sets) {
  Result<StudyConfig> config = LoadConfigFile(config_path, sets);
  if (!config.ok()) return config.status();
  Result<std::unique_ptr<Sampler>> sampler = MakeSampler(*config);
  if (!sampler.ok()) return sampler.status();
  Result<std::string> program = ResolveProgram(config->trial.command[0]);
  if (!program.ok()) return program.status().WithContext(config_path);
  std::error_code ec;
  if (std::filesystem::exists(config->study.storage, ec)) {
    return Status::InvalidInput(config_path + ": study.storage: " + config->study.storage +
                                " already exists; choose another study.name or study.storage (e.g. --set "
                                "study.storage=results/other.h5), or move the old file away");
  }
  return PreparedStudy{std::move(*config), std::move(*sampler), std::move(*program)};
}

}  // namespace cleansweep
