// The study report: one self-contained HTML file (no network, no library) with the study's
// summary, optimisation history, parallel coordinates, parameter importance (fANOVA), slice
// plots, intermediate values, the per-worker timeline and the failures. `cleansweep report`
// writes it from a study file; ReportingStore refreshes it during a run.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "study/study_file.hpp"
#include "study/study_store.hpp"
#include "util/clock.hpp"

namespace cleansweep {

struct ReportInput {
  StudyConfig config;
  std::string path;  // the study file, for the header
  std::string sampler, created, version;
  long long seed = 0;
  std::string warm_start;  // the study file's warm_start attribute
  std::vector<TrialRecord> trials;
  std::vector<IntermediateValue> intermediate;
  int refresh_seconds = 0;  // > 0: the page reloads itself this often (the sweep is running)
  double now = 0;           // the page's "generated" time, Unix seconds; 0: the system clock's now
};

ReportInput ReportInputFrom(const StudyData& study);

// Where the report of `study_path` goes by default: the study file's name with ".html".
std::string DefaultReportPath(const std::string& study_path);

std::string RenderReport(const ReportInput& input);

// Writes `html` to `path` through a temporary file and a rename, so a browser never loads half.
Status WriteReportFile(const std::string& path, const std::string& html);

// A StudyStore that passes everything on to `inner` and keeps a copy of the rows, from which it
// rewrites the report at most every `every` (and once more when it is destroyed, at the end of
// the run). A report that cannot be written is a warning on stderr, never a failed sweep.
class ReportingStore : public StudyStore {
 public:
  // `clock` (the system clock if null) decides when `every` has passed.
  ReportingStore(std::unique_ptr<StudyStore> inner, ReportInput base, std::string report_path, Millis every,
                 const Clock* clock = nullptr);
  ~ReportingStore() override;
  ReportingStore(const ReportingStore&) = delete;
  ReportingStore& operator=(const ReportingStore&) = delete;

  Status PutTrial(const TrialRecord& record) override;
  Status AppendIntermediate(const IntermediateValue& value) override;
  Status AppendAttempt(const TrialRecord& attempt) override { return inner_->AppendAttempt(attempt); }
  Status AppendTrialParam(const TrialParamRow& row) override { return inner_->AppendTrialParam(row); }
  void DeferFlush(bool defer) override {
    deferred_ = defer;
    inner_->DeferFlush(defer);
  }
  // Flushes the inner store; then the rows it made durable join the page, which is redrawn when
  // `every` has passed since the last drawing.
  Status Flush() override;
  Status RecordStopReason(const std::string& reason) override { return inner_->RecordStopReason(reason); }

 private:
  void MaybeWrite(bool final);

  std::unique_ptr<StudyStore> inner_;
  ReportInput input_;
  std::map<std::int64_t, size_t> row_of_;    // trial number -> index in input_.trials
  std::vector<TrialRecord> pending_trials_;  // written, not yet flushed: not on the page yet
  std::vector<IntermediateValue> pending_values_;
  bool deferred_ = false;
  std::string path_;
  Millis every_;
  const Clock* clock_;
  double last_written_ = 0;
  bool warned_ = false;
};

}  // namespace cleansweep
