// Turning trial.command into the argv of one trial.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trial/param_value.hpp"
#include "util/status.hpp"

namespace cleansweep {

// Finds the program of trial.command[0]: a word with a '/' is a path (relative to the current
// folder); a bare name is looked up next to the running cleansweep executable first, then on PATH.
// InvalidInput says what was tried when it is missing or not executable.
Result<std::string> ResolveProgram(const std::string& word);

// Finds the plugin of trial.command[0] for trial.launcher: forkserver: a word with a '/' is a path;
// a bare name is looked up next to the running cleansweep executable, then in ../lib and
// ../lib/cleansweep from there (the build tree and an install). InvalidInput says what was tried.
Result<std::string> ResolvePlugin(const std::string& word);

// ResolvePlugin when trial.launcher is forkserver, else ResolveProgram.
inline Result<std::string> ResolveTrialProgram(const std::string& word, bool plugin) {
  return plugin ? ResolvePlugin(word) : ResolveProgram(word);
}

// The folder of python/cleansweep_trial.py, which trial.objective runs (put on the trial's
// PYTHONPATH): $CLEANSWEEP_PYTHON_DIR, else an install's share/cleansweep/python beside the running
// executable's folder, else this source tree's python/. InvalidInput says what was tried.
Result<std::string> FindPythonHelper();

// The cleansweep-forkserver executable: $CLEANSWEEP_FORKSERVER, else next to the running
// executable, else on PATH.
Result<std::string> FindForkServer();

// Replaces {name} placeholders with parameter values, {trial} with the trial number and
// {trial_dir} with its folder. A word whose placeholder names a parameter that is inactive in this
// trial is left out (so write `--momentum={momentum}` as one word).
std::vector<std::string> ExpandCommand(const std::vector<std::string>& command, const ParamSet& params,
                                       std::int64_t trial, const std::string& trial_dir);

}  // namespace cleansweep
