#include <cstdio>
#include <filesystem>
#include <set>
#include <system_error>

#include "cli/commands.hpp"
#include "launch/checkpoints.hpp"
#include "study/study_file.hpp"
#include "study/study_lock.hpp"

namespace cleansweep {
namespace {

// Bytes under `path` (a file, or a folder and everything in it); what cannot be read counts 0.
std::uintmax_t SizeOf(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    const std::uintmax_t size = std::filesystem::file_size(path, ec);
    return ec ? 0 : size;
  }
  std::uintmax_t total = 0;
  for (std::filesystem::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec)) {
      const std::uintmax_t size = it->file_size(size_ec);
      total += size_ec ? 0 : size;
    }
  }
  return total;
}

}  // namespace

int CleanCommand(const CleanArgs& args) {
  Result<StudyData> study = ReadStudyFile(args.study);
  if (!study.ok()) return PrintError(study.status());
  // A sweep running on the study may still go on from any checkpoint: not while it holds the study.
  Result<StudyLock> lock = StudyLock::Acquire(args.study);
  if (!lock.ok()) return PrintError(lock.status());
  StudyOptions where = study->config.study;
  where.storage = args.study;  // the trial folders lie beside the file as given here
  const std::string root = TrialsRoot(where);
  const std::set<std::int64_t> go_on = TrialsToContinue(study->trials);
  std::uintmax_t bytes = 0;
  int removed = 0, trials = 0, kept = 0;
  std::string error;
  for (const TrialRecord& r : study->trials) {
    const std::filesystem::path dir = CheckpointDir(root + "/" + std::to_string(r.number));
    std::uintmax_t size = 0;
    int entries = 0;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (!CheckpointStepOf(it->path().filename().string())) continue;
      size += SizeOf(it->path());
      ++entries;
    }
    if (entries == 0) continue;
    if (go_on.count(r.number)) {
      ++kept;
      continue;
    }
    const int gone = RemoveCheckpointsBefore(dir.string(), kAllCheckpoints, &error);
    removed += gone;
    trials += gone > 0 ? 1 : 0;
    bytes += gone == entries ? size : 0;
  }
  std::printf("removed %d checkpoints of %d trials (%.1f MiB) under %s\n", removed, trials,
              static_cast<double>(bytes) / (1 << 20), root.c_str());
  if (kept > 0) {
    std::printf(
        "kept the checkpoints of %d interrupted or paused trials: they go on from them when the study "
        "resumes\n",
        kept);
  }
  if (!error.empty()) return PrintError(Status::IoError(error + " (the others were removed)"));
  return kExitOk;
}

}  // namespace cleansweep
