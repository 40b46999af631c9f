// StudyStore: where rank 0 puts results. The HDF5 study file is the real one; tests use
// MemoryStudyStore. Not thread-safe; only the coordinator calls it.
#pragma once

#include <map>
#include <vector>

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
  // Group commit: while deferred, rows are written but become durable only at Flush(), all of
  // them at once. The coordinator defers, and flushes once per turn of its loop, before anything
  // that depends on those rows (an assignment, a progress line) leaves it.
  virtual void DeferFlush(bool defer) { (void)defer; }
  virtual Status Flush() { return Status::Ok(); }
};

class MemoryStudyStore : public StudyStore {
 public:
  Status PutTrial(const TrialRecord& record) override {
    if (row_of_.size() != trials.size()) {  // rows were added to `trials` directly (tests do)
      row_of_.clear();
      for (size_t i = 0; i < trials.size(); ++i) row_of_[trials[i].number] = i;
    }
    if (const auto [it, fresh] = row_of_.emplace(record.number, trials.size()); !fresh) {
      trials[it->second] = record;
    } else {
      trials.push_back(record);
    }
    return Status::Ok();
  }
  Status AppendIntermediate(const IntermediateValue& value) override {
    intermediate.push_back(value);
    return Status::Ok();
  }

  std::vector<TrialRecord> trials;
  std::vector<IntermediateValue> intermediate;

 private:
  std::map<std::int64_t, size_t> row_of_;  // trial number -> index in `trials`
};

}  // namespace cleansweep
