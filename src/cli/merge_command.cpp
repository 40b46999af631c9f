// `cleansweep merge OUT SHARD...`: one study file from the study files of a sharded sweep.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "cli/commands.hpp"
#include "study/merge.hpp"
#include "study/study_lock.hpp"
#include "util/output_file.hpp"

namespace cleansweep {
namespace {

Status WriteMerged(const MergedStudy& merged, const std::string& path) {
  Result<std::unique_ptr<StudyFile>> file =
      StudyFile::Create(path, merged.config, {{"merged_from", merged.merged_from}});
  if (!file.ok()) return file.status();
  for (const TrialRecord& r : merged.trials) CS_RETURN_IF_ERROR((*file)->PutTrial(r));
  for (const IntermediateValue& v : merged.intermediate) CS_RETURN_IF_ERROR((*file)->AppendIntermediate(v));
  return Status::Ok();
}

}  // namespace

int MergeCommand(const MergeArgs& args) {
  std::error_code ec;
  const Status usable = CheckOutputPath(args.output, args.shards, "the merged study");
  if (!usable.ok()) return PrintError(usable);
  const auto exists = [&] {
    return PrintError(Status::InvalidInput(args.output + ": a file already exists here; merge into a new file"));
  };
  if (std::filesystem::exists(args.output, ec)) return exists();
  // Hold the output's lock and every shard's for the whole merge: no coordinator may write a
  // shard while it is read, and no second merge may write the same output.
  Result<StudyLock> out_lock = StudyLock::Acquire(args.output);
  if (!out_lock.ok()) return PrintError(out_lock.status());
  std::vector<StudyLock> locks;
  std::vector<StudyData> shards;
  for (size_t i = 0; i < args.shards.size(); ++i) {
    const std::string& path = args.shards[i];
    for (size_t j = 0; j < i; ++j) {
      if (std::filesystem::equivalent(path, args.shards[j], ec)) {
        return PrintError(Status::InvalidInput(path + ": given twice"));
      }
    }
    Result<StudyData> data = ReadStudyFile(path);
    if (!data.ok()) return PrintError(data.status());
    Result<StudyLock> lock = StudyLock::Acquire(path);
    if (!lock.ok()) return PrintError(lock.status());
    locks.push_back(std::move(*lock));
    shards.push_back(std::move(*data));
  }
  Result<MergedStudy> merged = MergeShards(shards, args.output, args.allow_missing);
  if (!merged.ok()) return PrintError(merged.status());

  // Written under a temporary name and renamed: OUT is either absent or complete.
  const std::filesystem::path out(args.output);
  const std::string partial =
      (out.parent_path() / ("." + out.filename().string() + ".merging-" + std::to_string(::getpid()))).string();
  if (const Status written = WriteMerged(*merged, partial); !written.ok()) {
    std::filesystem::remove(partial, ec);
    return PrintError(written);
  }
  if (const Status renamed = RenameNoReplace(partial, args.output); !renamed.ok()) {  // never over a file
    std::filesystem::remove(partial, ec);
    // A file made there while we merged: the same refusal as one that was there before.
    return renamed.code() == Status::Code::kInvalidInput ? exists() : PrintError(renamed);
  }
  std::map<std::string, int> states;
  for (const TrialRecord& r : merged->trials) ++states[TrialStateName(r.state)];
  std::string counts;
  for (const auto& [state, n] : states) counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + state;
  std::int64_t array = 0, joined = 0;  // a job array's N, and the shards that joined it (run --join)
  for (const StudyData& shard : shards) {
    if (shard.config.study.shard.joined) {
      ++joined;
    } else {
      array = std::max(array, shard.config.study.shard.count);
    }
  }
  const std::string what = std::to_string(shards.size() - static_cast<size_t>(joined)) + " of " +
                           std::to_string(array) + " shards" +
                           (joined > 0 ? " and " + std::to_string(joined) + " joined" : std::string());
  std::printf("merged %s into %s: %zu trials (%s)\n", what.c_str(), args.output.c_str(), merged->trials.size(),
              counts.empty() ? "none" : counts.c_str());
  return kExitOk;
}

}  // namespace cleansweep
