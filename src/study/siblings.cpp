#include "study/siblings.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include "study/study_differences.hpp"
#include "study/study_file.hpp"
#include "study/study_lock.hpp"
#include "util/unique_fd.hpp"

namespace cleansweep {
namespace {

namespace fs = std::filesystem;

bool Finished(TrialState state) {
  return state != TrialState::kRunning && state != TrialState::kInterrupted && state != TrialState::kPaused;
}

std::string FolderOf(const std::string& storage) {
  const fs::path folder = fs::path(storage).parent_path();
  return folder.empty() ? std::string(".") : folder.string();
}

}  // namespace

SiblingReader::SiblingReader(const StudyConfig& config)
    : config_(config),
      folder_(FolderOf(config.study.storage)),
      sweep_name_(fs::path(SweepStoragePath(config.study.storage)).filename().string()),
      own_name_(fs::path(config.study.storage).filename().string()) {}

SiblingSource::Scan SiblingReader::Read() {
  Scan scan;
  const auto warn = [&](const std::string& path, const std::string& why) {
    std::string& last = warned_[path];
    if (last != why) scan.warnings.push_back(path + ": " + why + "; skipped, this shard goes on without it");
    last = why;
  };
  // Taken before the first stat(): a write after it leaves a later time on the file.
  const double scanned_at = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::error_code ec;
  std::map<std::string, Seen> now;
  for (fs::directory_iterator it(folder_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::int64_t index = -1;
    if (name == own_name_ || !IsSweepFileName(sweep_name_, name, &index)) continue;
    const std::string path = (fs::path(folder_) / name).string();
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;  // gone since the listing
    Seen seen;
    seen.size = static_cast<std::int64_t>(st.st_size);
    seen.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    seen.inode = static_cast<std::uint64_t>(st.st_ino);
    seen.live = StudyLock::HeldNow(path);
    now[path] = seen;
  }
  if (ec) scan.warnings.push_back(folder_ + ": cannot list the sweep's folder (" + ec.message() + "); sharing skipped");
  // Files gone since the last scan: what they taught stays with the sampler, their trials no longer run.
  for (auto it = files_.begin(); it != files_.end();) {
    if (now.count(it->first)) {
      ++it;
      continue;
    }
    scan.changed = true;
    seen_.erase(it->first);
    it = files_.erase(it);
  }
  for (const auto& [path, seen] : now) {
    const auto before = seen_.find(path);
    const bool same = before != seen_.end() && before->second.size == seen.size &&
                      before->second.mtime_ns == seen.mtime_ns && before->second.inode == seen.inode &&
                      before->second.live == seen.live &&
                      before->second.read_at - static_cast<double>(seen.mtime_ns) * 1e-9 >= kSettleSeconds;
    if (same) continue;
    seen_[path] = seen;
    seen_[path].read_at = scanned_at;
    if (seen.size == 0) {  // claimed by a joiner (ClaimStudyFile) whose file is not written yet
      warn(path, "still being created");
      continue;
    }
    Result<StudyData> data = ReadStudyFile(path);
    if (!data.ok()) {
      warn(path, data.status().message());
      seen_.erase(path);  // try again next time
      continue;
    }
    const std::vector<std::string> differences =
        SweepDifferences(config_, config_.study.storage, data->config, /*shard_count=*/false);
    if (!differences.empty()) {
      warn(path, "not a part of this sweep (" + differences.front() + ")");
      continue;
    }
    // A study run without --shard shares only with the jobs that joined it: array shards of the
    // same name are an earlier sweep's (`run` would not start beside its own array).
    if (!config_.study.shard.part() && !data->config.study.shard.joined) {
      warn(path, "an array shard of an earlier sweep of this name (this study was run without --shard)");
      continue;
    }
    warned_.erase(path);
    SiblingFile& file = files_[path];
    file.path = path;
    file.shard = data->config.study.shard.part() ? data->config.study.shard.Name() : "";
    file.live = seen.live;
    file.trials = std::move(data->trials);
    for (TrialRecord& r : file.trials) r.output_tail.clear();  // the sampler needs no logs
    scan.changed = true;
  }
  return scan;
}

std::int64_t NextJoinIndex(const std::string& storage) {
  const std::string sweep = SweepStoragePath(storage);
  const std::string sweep_name = fs::path(sweep).filename().string();
  std::int64_t next = 0;
  std::error_code ec;
  for (fs::directory_iterator it(FolderOf(sweep), ec), end; !ec && it != end; it.increment(ec)) {
    std::int64_t index = -1;
    if (!IsSweepFileName(sweep_name, it->path().filename().string(), &index)) continue;
    next = std::max(next, std::max<std::int64_t>(index, 0) + 1);
  }
  return next;
}

Result<bool> ClaimStudyFile(const std::string& path) {
  std::error_code ec;
  const fs::path folder = fs::path(path).parent_path();
  if (!folder.empty()) fs::create_directories(folder, ec);
  const UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (fd.valid()) return true;
  if (errno == EEXIST) return false;
  return Status::IoError(path + ": cannot create the joined shard's study file: " + std::strerror(errno));
}

std::string MisfitOf(const StudyConfig& config, const ParamSet& params) {
  ParamSet seen;  // the parameters checked so far, for the conditions of those that follow
  for (const ParamSpec& spec : config.space.params()) {
    const bool active = SearchSpace::IsActive(spec, seen);
    const auto it = params.find(spec.name);
    if (!active) {
      if (it != params.end()) return spec.name + " given where it is inactive";
      continue;
    }
    if (it == params.end()) return spec.name + " missing";
    Result<ParamValue> value = SearchSpace::Normalize(spec, it->second);
    if (!value.ok()) return spec.name + " outside this space";
    seen[spec.name] = *value;
  }
  for (const auto& [name, value] : params) {
    if (!config.space.Find(name)) return "extra parameter " + name;
  }
  return "";
}

std::string WarmStartFile::Summary() const {
  std::string text = path + ": " + std::to_string(used.size()) + " of " + std::to_string(read) + " trials";
  if (!left_out.empty()) {
    std::int64_t out = 0;
    std::string why;
    for (const auto& [reason, n] : left_out) {
      out += n;
      why += (why.empty() ? "" : ", ") + reason + (n > 1 ? " (" + std::to_string(n) + ")" : "");
    }
    text += " (" + std::to_string(out) + " left out: " + why + ")";
  }
  return text;
}

Result<std::vector<WarmStartFile>> ReadWarmStart(const StudyConfig& config) {
  std::vector<WarmStartFile> out;
  for (const std::string& path : config.study.warm_start) {
    std::error_code ec;
    if (fs::equivalent(path, config.study.storage, ec)) {
      return Status::InvalidInput("study.warm_start: " + path + " is this study's own file; name earlier studies");
    }
    Result<StudyData> data = ReadStudyFile(path);
    if (!data.ok()) return data.status().WithContext("study.warm_start");
    const std::vector<Metric>& want = config.study.metrics;
    const std::vector<Metric>& have = data->config.study.metrics;
    bool same = want.size() == have.size();
    for (size_t i = 0; same && i < want.size(); ++i) {
      same = want[i].name == have[i].name && want[i].direction == have[i].direction;
    }
    if (!same) {
      return Status::InvalidInput("study.warm_start: " + path + " measures " + data->config.study.DescribeMetrics() +
                                  ", this study " + config.study.DescribeMetrics() +
                                  ": its values mean nothing here; warm-start from studies of the same objective");
    }
    WarmStartFile file;
    file.path = path;
    for (TrialRecord& r : data->trials) {
      if (!Finished(r.state)) continue;
      ++file.read;
      const std::string misfit = MisfitOf(config, r.params);
      if (!misfit.empty()) {
        ++file.left_out[misfit];
        continue;
      }
      r.output_tail.clear();
      // Judged by this study's constraints, which may differ from the earlier study's.
      if (r.state == TrialState::kComplete) r.violation = config.study.Violation(r);
      file.used.push_back(std::move(r));
    }
    out.push_back(std::move(file));
  }
  return out;
}

}  // namespace cleansweep
