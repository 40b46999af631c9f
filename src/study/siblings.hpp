// The other study files of one sweep (shards of a job array, joined shards, the sweep's own file),
// read by a coordinator that shares what the sweep has learned (study.share_every; docs/slurm.md,
// "Shards that share"). Read-only and with the checked reader: a sibling is never written, and a
// sibling that is missing, still being created, damaged or of another sweep is skipped with one
// warning, never an error. Also the earlier studies of study.warm_start.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/study_config.hpp"
#include "trial/trial_record.hpp"

namespace cleansweep {

struct SiblingFile {
  std::string path;
  std::string shard;  // its study.shard ("2/8", "joined-9"), "" for the sweep's own name
  bool live = false;  // its coordinator holds the study's lock: its RUNNING rows run now
  std::vector<TrialRecord> trials;
};

// What the coordinator shares: each call reads again what changed since the last.
class SiblingSource {
 public:
  virtual ~SiblingSource() = default;
  struct Scan {
    std::vector<std::string> warnings;  // files skipped: one line per file, once per reason
    bool changed = false;               // files() differs from the last scan
  };
  virtual Scan Read() = 0;
  // The sweep's other files that could be read, by path.
  virtual const std::map<std::string, SiblingFile>& files() const = 0;
};

// The sibling files of `config`'s study file (config.study.storage): every file beside it that
// `IsSweepFileName` puts in its sweep, but itself. A file is read again only when its size,
// modification time, inode or liveness changed, or when it was last read less than kSettleSeconds after
// its modification time: a file system that keeps times in whole seconds (or a writer's clock
// ahead of this node's) could hide a second write of the same size behind an unchanged time, so a
// recently written file is read once more after it settled. A live sibling that wrote nothing
// since costs one stat() a read.
class SiblingReader : public SiblingSource {
 public:
  static constexpr double kSettleSeconds = 10;
  explicit SiblingReader(const StudyConfig& config);
  Scan Read() override;
  const std::map<std::string, SiblingFile>& files() const override { return files_; }

 private:
  struct Seen {
    std::int64_t size = -1;
    std::int64_t mtime_ns = -1;
    std::uint64_t inode = 0;
    bool live = false;
    double read_at = 0;  // wall-clock seconds of the last read (what its mtime is compared with)
  };
  const StudyConfig& config_;
  std::string folder_;
  std::string sweep_name_;  // the sweep's file name, without shard tag
  std::string own_name_;
  std::map<std::string, Seen> seen_;
  std::map<std::string, std::string> warned_;  // path -> the reason last warned about
  std::map<std::string, SiblingFile> files_;
};

// The next free index K for `run --join` in the sweep of `storage`: one past the highest index of
// any of its files (the sweep's own file counts as 0).
std::int64_t NextJoinIndex(const std::string& storage);

// Claims the study file `path` with an exclusive create (an empty file; StudyFile::Create fills
// it): false when it exists already, so that of two joiners racing for one index only one wins.
// IoError when it cannot be created for another reason.
Result<bool> ClaimStudyFile(const std::string& path);

// study.warm_start: each earlier study's finished trials (not INTERRUPTED, RUNNING or PAUSED)
// whose parameters fit `config`'s search space, as history for the sampler.
struct WarmStartFile {
  std::string path;
  std::int64_t read = 0;  // finished trials in the file
  std::vector<TrialRecord> used;
  std::map<std::string, std::int64_t> left_out;  // why -> how many ("lr out of range", ...)
  std::string Summary() const;                   // "results/a.h5: 48 of 50 trials (2 left out: lr out of range)"
};
// InvalidInput when a file is missing, not a study, damaged, or measures other metrics (a trial's
// value means nothing to a study of another objective), naming the file.
Result<std::vector<WarmStartFile>> ReadWarmStart(const StudyConfig& config);

// Why `params` do not fit `config`'s search space ("lr out of range", "lr missing",
// "batch not a choice", "extra parameter momentum"), or "" when they do: every parameter that is
// active for them present with a value the space allows, no other.
std::string MisfitOf(const StudyConfig& config, const ParamSet& params);

}  // namespace cleansweep
