// The HDF5 study file: one per study, written only by rank 0, read by `show`, `export`, h5py and
// pandas. docs/study-format.md is the schema. The writer works in HDF5's SWMR mode, so readers may
// open the file while it grows and a killed writer leaves a file that opens (docs/reliability.md).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/study_config.hpp"
#include "study/study_lock.hpp"
#include "study/study_store.hpp"

namespace cleansweep {

inline constexpr int kStudySchemaVersion = 3;

// Call first in main(), before anything touches HDF5: the library then does not shut itself down
// at exit. Every study file is closed by its owner before that; one that cannot be (its disk
// failed) is left as its last good flush left it, where HDF5's own shutdown would try to flush
// it again and crash.
void KeepHdf5OpenAtExit();

class StudyFile : public StudyStore {
 public:
  // Creates `path` (and its folder) for `config`. Refuses, with InvalidInput, to touch a file that
  // exists or a study another coordinator holds. On any failure nothing is left behind.
  // `notes` become extra text attributes on the root ("merged_from", say).
  static Result<std::unique_ptr<StudyFile>> Create(const std::string& path, const StudyConfig& config,
                                                   const std::map<std::string, std::string>& notes = {});
  // Opens an existing study to continue it with `config` (already checked against the stored one;
  // its text replaces the stored config). Clears the flags a killed writer left. InvalidInput when
  // another coordinator holds the study or the file has another schema version.
  static Result<std::unique_ptr<StudyFile>> Reopen(const std::string& path, const StudyConfig& config);
  ~StudyFile() override;

  // Writes the row and, unless flushes are deferred, flushes the file before returning.
  Status PutTrial(const TrialRecord& record) override;
  Status AppendIntermediate(const IntermediateValue& value) override;
  Status AppendAttempt(const TrialRecord& attempt) override;
  Status AppendTrialParam(const TrialParamRow& row) override;
  void DeferFlush(bool defer) override;
  Status Flush() override;
  // The root attribute stop_reason, rewritten in place (SWMR allows that, not a new attribute).
  Status RecordStopReason(const std::string& reason) override;

 private:
  struct Impl;  // HDF5 handles; keeps hdf5.h out of this header
  explicit StudyFile(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
};

// Everything a study file holds, as read back.
struct StudyData {
  std::string path;
  StudyConfig config;  // parsed from the stored config text
  std::string sampler;
  long long seed = 0;
  std::string cleansweep_version;
  long long schema_version = 0;
  std::string created;      // ISO 8601, UTC
  std::string merged_from;  // written by cleansweep merge: "K/N PATH (T trials)" per shard; else ""
  std::string stop_reason;  // why its last run ended before n_trials unstopped (stop_when, PBT, grid); else ""
  // study.warm_start as the study was created with it: "PATH: U of T trials (...)" per file; else "".
  std::string warm_start;
  std::string config_history = "[]";  // JSON list of the resumes that changed the config (study-format.md)
  std::vector<TrialRecord> trials;
  std::vector<IntermediateValue> intermediate;
  // /attempts: earlier attempts of trials that went on from a checkpoint (number = the trial).
  std::vector<TrialRecord> attempts;
  // /params: the parameters trials defined while they ran (define-by-run), name -> the latest
  // distribution asked for, and the names in the order they were first asked. Their values are
  // in the trials' params.
  std::map<std::string, std::string> trial_defined;
  std::vector<std::string> trial_defined_order;
};

// InvalidInput when `path` is missing or not a cleansweep study; IoError on read failures.
Result<StudyData> ReadStudyFile(const std::string& path);

}  // namespace cleansweep
