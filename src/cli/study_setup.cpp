#include "cli/study_setup.hpp"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "launch/trial_command.hpp"
#include "study/study_lock.hpp"
#include "study/table_layout.hpp"

namespace cleansweep {
namespace {

// name -> its line of SearchSpace::Describe() ("  lr: float [1e-05, 0.1] log").
std::map<std::string, std::string> DescribedParams(const SearchSpace& space) {
  std::map<std::string, std::string> lines;
  std::istringstream text(space.Describe());
  for (std::string line; std::getline(text, line);) {
    const size_t colon = line.find(": ");
    if (line.rfind("  ", 0) == 0 && colon != std::string::npos)
      lines[line.substr(2, colon - 2)] = line.substr(colon + 2);
  }
  return lines;
}

}  // namespace

std::vector<std::string> StudyDifferences(const StudyConfig& stored, const StudyConfig& now, bool* breaking) {
  std::vector<std::string> out;
  *breaking = false;
  if (stored.study.metric != now.study.metric) {
    out.push_back("study.metric: was " + stored.study.metric + ", now " + now.study.metric);
  }
  if (stored.study.direction != now.study.direction) {
    out.push_back(std::string("study.direction: was ") + DirectionName(stored.study.direction) + ", now " +
                  DirectionName(now.study.direction));
  }
  const auto before = DescribedParams(stored.space), after = DescribedParams(now.space);
  for (const auto& [name, line] : before) {
    const auto it = after.find(name);
    if (it == after.end()) {
      out.push_back("param " + name + ": removed (was " + line + ")");
      *breaking = true;
    } else if (it->second != line) {
      out.push_back("param " + name + ": was " + line + ", now " + it->second);
      const ParamSpec& was = *stored.space.Find(name);
      const ParamSpec& is = *now.space.Find(name);
      // A new column type, or text wider than the file's fixed-width column, cannot be stored.
      if (ParamColumnType(was) != ParamColumnType(is) ||
          (ParamColumnType(is) == ColumnType::kString && ParamColumnLength(is) > ParamColumnLength(was))) {
        *breaking = true;
      }
    }
  }
  for (const auto& [name, line] : after) {
    if (!before.count(name)) {
      out.push_back("param " + name + ": added (" + line + ")");
      *breaking = true;
    }
  }
  return out;
}

Result<PreparedStudy> PrepareStudy(const std::string& path, const std::vector<std::string>& sets, StudyMode mode,
                                   bool force) {
  PreparedStudy prepared;
  Result<StudyConfig> config = Status::InvalidInput("");
  if (mode == StudyMode::kResume) {
    Result<StudyData> stored = ReadStudyFile(path);
    if (!stored.ok()) return stored.status();
    std::vector<std::string> all_sets = {"study.storage=" + path};
    all_sets.insert(all_sets.end(), sets.begin(), sets.end());
    config = LoadConfigText(stored->config.yaml_text, path + " (stored config)", all_sets);
    prepared.prior = std::move(*stored);
  } else {
    config = LoadConfigFile(path, sets);
  }
  if (!config.ok()) return config.status();
  Result<std::unique_ptr<Sampler>> sampler = MakeSampler(*config);
  if (!sampler.ok()) return sampler.status();
  Result<std::string> program = ResolveProgram(config->trial.command[0]);
  if (!program.ok()) return program.status().WithContext(path);
  const std::string& storage = config->study.storage;
  std::error_code ec;
  // The nearest existing folder on the way to the study file must be a folder we can write into.
  std::filesystem::path existing = std::filesystem::absolute(storage, ec).parent_path();
  while (!existing.empty() && !std::filesystem::exists(existing, ec) && existing != existing.root_path()) {
    existing = existing.parent_path();
  }
  if (!std::filesystem::is_directory(existing, ec) || ::access(existing.c_str(), W_OK) != 0) {
    return Status::InvalidInput(path + ": study.storage: " + existing.string() + " cannot hold the study file " +
                                storage + " (" +
                                (std::filesystem::is_directory(existing, ec) ? "not writable" : "not a folder") +
                                "); choose another study.storage");
  }
  const bool exists = std::filesystem::exists(storage, ec);
  if (mode == StudyMode::kNew && exists) {
    return Status::InvalidInput(path + ": study.storage: " + storage +
                                " already exists; continue it with --resume (or: cleansweep resume " + storage +
                                "), choose another study.name or study.storage, or move the old file away");
  }
  if (mode == StudyMode::kNewOrResume && exists) {
    Result<StudyData> stored = ReadStudyFile(storage);
    if (!stored.ok()) return stored.status();
    prepared.prior = std::move(*stored);
  }
  if (prepared.prior) {
    if (prepared.prior->schema_version != kStudySchemaVersion) {
      return Status::InvalidInput(storage + ": written with study-file schema " +
                                  std::to_string(prepared.prior->schema_version) +
                                  "; this cleansweep continues schema " + std::to_string(kStudySchemaVersion) +
                                  " only. Start a new study instead");
    }
    bool breaking = false;
    const std::vector<std::string> diff = StudyDifferences(prepared.prior->config, *config, &breaking);
    if (!diff.empty() && (breaking || !force)) {
      std::string text = storage + ": the config does not match the study it would continue:";
      for (const std::string& line : diff) text += "\n  " + line;
      text += breaking ? "\nthese change the study file's columns: start a new study (another study.name) instead"
                       : "\nthe trials so far were run on the old definition; add --force to continue anyway";
      return Status::InvalidInput(text);
    }
    // Fail early if another coordinator holds it (the lock is taken for good when the file opens).
    Result<StudyLock> lock = StudyLock::Acquire(storage);
    if (!lock.ok()) return lock.status();
  }
  prepared.config = std::move(*config);
  prepared.sampler = std::move(*sampler);
  prepared.program = std::move(*program);
  return prepared;
}

}  // namespace cleansweep
