#include "launch/trial_command.hpp"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

namespace cleansweep {
namespace {

bool IsExecutableFile(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

std::string OwnDirectory() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : self.parent_path().string();
}

// A bare program name next to the running executable, then on PATH; "" when neither has it.
std::string FindNextToUsOrOnPath(const std::string& name) {
  const std::string own = OwnDirectory();
  if (!own.empty() && IsExecutableFile(own + "/" + name)) return own + "/" + name;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty() && IsExecutableFile(dir + "/" + name)) return dir + "/" + name;
  }
  return "";
}

}  // namespace

Result<std::string> ResolveProgram(const std::string& word) {
  if (word.find('/') != std::string::npos) {
    std::error_code ec;
    if (!std::filesystem::exists(word, ec)) {
      return Status::InvalidInput("trial.command[0]: program '" + word + "' does not exist (paths are relative to " +
                                  std::filesystem::current_path(ec).string() + ")");
    }
    if (!IsExecutableFile(word)) {
      return Status::InvalidInput("trial.command[0]: '" + word +
                                  "' is not an executable file (chmod +x it, or "
                                  "start it through its interpreter, e.g. [python3, " +
                                  word + "])");
    }
    return std::filesystem::absolute(word, ec).string();
  }
  if (std::string found = FindNextToUsOrOnPath(word); !found.empty()) return found;
  return Status::InvalidInput("trial.command[0]: program '" + word + "' not found next to cleansweep (" +
                              OwnDirectory() + ") nor on PATH; give its path, or install it");
}

Result<std::string> ResolvePlugin(const std::string& word) {
  std::error_code ec;
  const auto readable = [](const std::string& path) {
    std::error_code e;
    return std::filesystem::is_regular_file(path, e) && ::access(path.c_str(), R_OK) == 0;
  };
  if (word.find('/') != std::string::npos) {
    if (!readable(word)) {
      return Status::InvalidInput("trial.command[0]: plugin '" + word +
                                  "' is not a readable file (paths are relative to " +
                                  std::filesystem::current_path(ec).string() + ")");
    }
    return std::filesystem::absolute(word, ec).string();
  }
  const std::string own = OwnDirectory();
  std::string tried;
  for (const std::string& dir :
       {own, own + "/../lib", own + "/../lib/cleansweep", own + "/../" CLEANSWEEP_LIBDIR "/cleansweep"}) {
    const std::string path = dir + "/" + word;
    if (readable(path)) return std::filesystem::weakly_canonical(path, ec).string();
    tried += (tried.empty() ? "" : ", ") + dir;
  }
  return Status::InvalidInput("trial.command[0]: plugin '" + word + "' not found in " + tried +
                              "; give its path (with trial.launcher: forkserver, command[0] is the plugin, a .so)");
}

Result<std::string> FindPythonHelper() {
  std::error_code ec;
  const auto has_helper = [&](const std::string& dir) {
    return std::filesystem::is_regular_file(dir + "/cleansweep_trial.py", ec);
  };
  if (const char* set = std::getenv("CLEANSWEEP_PYTHON_DIR"); set && *set) {
    if (!has_helper(set)) {
      return Status::InvalidInput(std::string("CLEANSWEEP_PYTHON_DIR=") + set + " holds no cleansweep_trial.py");
    }
    return std::string(set);
  }
  const std::string own = OwnDirectory();
  std::string tried;
  for (const std::string& dir :
       {own + "/../" CLEANSWEEP_DATADIR "/cleansweep/python", std::string(CLEANSWEEP_PYTHON_SOURCE)}) {
    if (has_helper(dir)) return std::filesystem::weakly_canonical(dir, ec).string();
    tried += (tried.empty() ? "" : ", ") + dir;
  }
  return Status::InvalidInput("trial.objective: cleansweep_trial.py not found in " + tried +
                              "; set CLEANSWEEP_PYTHON_DIR to the folder that holds it");
}

Result<std::string> FindForkServer() {
  if (const char* set = std::getenv("CLEANSWEEP_FORKSERVER"); set && *set) {
    if (!IsExecutableFile(set))
      return Status::InvalidInput(std::string("CLEANSWEEP_FORKSERVER=") + set + " is not an executable file");
    return std::string(set);
  }
  if (std::string found = FindNextToUsOrOnPath("cleansweep-forkserver"); !found.empty()) return found;
  return Status::InvalidInput(
      "trial.launcher forkserver: cleansweep-forkserver is neither next to cleansweep (" + OwnDirectory() +
      ") nor on PATH; it is built and installed with cleansweep (or set CLEANSWEEP_FORKSERVER)");
}

std::vector<std::string> ExpandCommand(const std::vector<std::string>& command, const ParamSet& params,
                                       std::int64_t trial, const std::string& trial_dir) {
  std::vector<std::string> argv;
  for (const std::string& word : command) {
    std::string out;
    bool keep = true;
    for (size_t i = 0; i < word.size(); ++i) {
      const char c = word[i];
      if ((c == '{' || c == '}') && i + 1 < word.size() && word[i + 1] == c) {
        out += c;
        ++i;
      } else if (c == '{') {
        const size_t close = word.find('}', i);
        if (close == std::string::npos) {  // validation refuses this; should one get here, it is text
          out += word.substr(i);
          break;
        }
        const std::string name = word.substr(i + 1, close - i - 1);
        if (name == "trial") {
          out += std::to_string(trial);
        } else if (name == "trial_dir") {
          out += trial_dir;
        } else if (const auto it = params.find(name); it != params.end()) {
          out += FormatValue(it->second);
        } else {
          keep = false;
        }
        i = close;
      } else {
        out += c;
      }
    }
    if (keep) argv.push_back(out);
  }
  return argv;
}

}  // namespace cleansweep
