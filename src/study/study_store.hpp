// StudyStore: where rank 0 puts results. The HDF5 study file is the real one; tests use
// testing::MemoryStudyStore (tests/support/memory_study_store.hpp). Not thread-safe; only the
// coordinator calls it.
#pragma once

#include <string>

#include "trial/trial_record.hpp"

namespace cleansweep {

class StudyStore {
 public:
  virtual ~StudyStore() = default;
  // Each call makes the row durable (flushed to the file) before it returns, unless flushes are
  // deferred. PutTrial writes the row of `record.number`: a new row the first time (a RUNNING
  // trial), the same row afterwards.
  virtual Status PutTrial(const TrialRecord& record) = 0;
  virtual Status AppendIntermediate(const IntermediateValue& value) = 0;
  // An attempt of a trial that goes on under its number from a checkpoint: the row it had when
  // that attempt ended, kept apart (/attempts) before the trial's row is written again.
  virtual Status AppendAttempt(const TrialRecord& attempt) = 0;
  // Define-by-run: a parameter a running trial asked for, recorded before the trial gets its
  // value (/params). One row per (trial, name).
  virtual Status AppendTrialParam(const TrialParamRow& row) = 0;
  // Group commit: while deferred, rows are written but become durable only at Flush(), all of
  // them at once. The coordinator defers, and flushes once per turn of its loop, before anything
  // that depends on those rows (an assignment, a progress line) leaves it.
  virtual void DeferFlush(bool defer) { (void)defer; }
  virtual Status Flush() { return Status::Ok(); }
  // Why this run ends before n_trials (study.stop_when), or "" when it does not: a resumed run
  // clears what the last one said. Durable with the next flush.
  virtual Status RecordStopReason(const std::string& reason) {
    (void)reason;
    return Status::Ok();
  }
};

}  // namespace cleansweep
