#include "cli/study_setup.hpp"

#include <unistd.h>

#include <ctime>
#include <filesystem>

#include "launch/trial_command.hpp"
#include "study/study_differences.hpp"
#include "study/study_lock.hpp"

namespace cleansweep {
namespace {

// Whether `folder` can be made (or, existing, written into): null, or why not, with the nearest
// folder on the way that exists in `*existing`.
const char* NotCreatableIn(const std::filesystem::path& folder, std::string* existing) {
  std::error_code ec;
  std::filesystem::path at = folder;
  while (!at.empty() && !std::filesystem::exists(at, ec) && at != at.root_path()) at = at.parent_path();
  *existing = at.string();
  if (!std::filesystem::is_directory(at, ec)) return "not a folder";
  if (::access(at.c_str(), W_OK) != 0) return "not writable";
  return nullptr;
}

}  // namespace

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
    // The file resumed is the one named, also a shard's file that was renamed (the shard's
    // "-shard-K-of-N" is added to study.storage only where the name lacks it).
    if (config.ok()) config->study.storage = path;
    prepared.prior = std::move(*stored);
  } else {
    config = LoadConfigFile(path, sets);
  }
  if (!config.ok()) return config.status();
  Result<std::unique_ptr<Sampler>> sampler = MakeSampler(*config);
  if (!sampler.ok()) return sampler.status();
  Result<std::string> program =
      ResolveTrialProgram(config->trial.command[0], config->trial.launcher == LauncherKind::kForkServer);
  if (!program.ok()) return program.status().WithContext(path);
  const std::string& storage = config->study.storage;
  std::error_code ec;
  std::string existing;
  if (const char* why = NotCreatableIn(std::filesystem::absolute(storage, ec).parent_path(), &existing)) {
    return Status::InvalidInput(path + ": study.storage: " + existing + " cannot hold the study file " + storage +
                                " (" + why + "); choose another study.storage");
  }
  // Checked on this node; a worker on another that cannot create a trial's folder stops the sweep.
  const std::string trials_root = TrialsRoot(config->study);
  if (const char* why = NotCreatableIn(trials_root, &existing)) {
    return Status::InvalidInput(
        path + ": " + (config->study.trials_dir.empty() ? "study.storage" : "study.trials_dir") + ": " + existing +
        " cannot hold the trial folders " + trials_root + " (" + why + "); choose another study.trials_dir");
  }
  // A joined shard's file exists from the start: the empty claim that gave it its index.
  const bool claim = config->study.shard.joined && std::filesystem::is_regular_file(storage, ec) &&
                     std::filesystem::file_size(storage, ec) == 0 && !ec;
  const bool exists = std::filesystem::exists(storage, ec) && !claim;
  if (config->study.shard.joined && (ShardsPartitionSweep(config->sampler.kind) || config->sampler.kind == "pbt")) {
    return Status::InvalidInput(
        path + ": --join: a " + config->sampler.kind + " sweep has no trials to share out to a joined shard (" +
        (config->sampler.kind == "pbt" ? "population-based training runs one population in one job"
                                       : "random, grid and sobol shards run an exact part of the trial list each") +
        "); run it with --shard K/N, or choose a model-based sampler (tpe, gp, cmaes, nsga2)");
  }
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
  if (!config->study.warm_start.empty()) {
    const std::string sweep_name = std::filesystem::path(SweepStoragePath(storage)).filename().string();
    for (const std::string& earlier : config->study.warm_start) {
      std::int64_t index = -1;
      const std::filesystem::path p(earlier);
      if (std::filesystem::equivalent(
              p.parent_path().empty() ? "." : p.parent_path(),
              std::filesystem::path(storage).parent_path().empty() ? "." : std::filesystem::path(storage).parent_path(),
              ec) &&
          IsSweepFileName(sweep_name, p.filename().string(), &index)) {
        return Status::InvalidInput(path + ": study.warm_start: " + earlier +
                                    " is a file of this sweep, whose trials it shares already (study.share_every); "
                                    "warm-start from earlier studies only");
      }
    }
    Result<std::vector<WarmStartFile>> warm = ReadWarmStart(*config);
    if (!warm.ok()) return warm.status().WithContext(path);
    prepared.warm_start = std::move(*warm);
  }
  prepared.config = std::move(*config);
  prepared.sampler = std::move(*sampler);
  prepared.program = std::move(*program);
  return prepared;
}

Result<std::string> MoveAsideStaleTrialFolders(const std::string& trials_root) {
  std::error_code ec;
  if (!std::filesystem::exists(trials_root, ec)) return std::string();
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  std::string target = trials_root + ".orphaned-" + stamp;
  for (int n = 2; std::filesystem::exists(target, ec); ++n)
    target = trials_root + ".orphaned-" + stamp + "-" + std::to_string(n);
  std::filesystem::rename(trials_root, target, ec);
  if (ec) {
    return Status::IoError(trials_root + ": holds an earlier study's trial folders and cannot be moved aside (" +
                           ec.message() + "); move or remove it, then run again");
  }
  return target;
}

}  // namespace cleansweep
