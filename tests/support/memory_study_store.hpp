// A StudyStore in memory, for tests and benchmarks that need no HDF5 file: every row durable at
// once, and readable back.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "study/study_store.hpp"

namespace cleansweep::testing {

class MemoryStudyStore : public StudyStore {
 public:
  Status PutTrial(const TrialRecord& record) override {
    if (const auto [it, fresh] = row_of_.emplace(record.number, trials_.size()); !fresh) {
      trials_[it->second] = record;
    } else {
      trials_.push_back(record);
    }
    return Status::Ok();
  }
  Status AppendIntermediate(const IntermediateValue& value) override {
    intermediate_.push_back(value);
    return Status::Ok();
  }

  Status AppendAttempt(const TrialRecord& attempt) override {
    attempts_.push_back(attempt);
    return Status::Ok();
  }

  Status AppendTrialParam(const TrialParamRow& row) override {
    trial_params_.push_back(row);
    return Status::Ok();
  }

  Status RecordStopReason(const std::string& reason) override {
    stop_reason_ = reason;
    return Status::Ok();
  }

  const std::vector<TrialRecord>& trials() const { return trials_; }  // one row per trial, in first-put order
  const std::string& stop_reason() const { return stop_reason_; }
  const std::vector<IntermediateValue>& intermediate() const { return intermediate_; }
  const std::vector<TrialRecord>& attempts() const { return attempts_; }
  const std::vector<TrialParamRow>& trial_params() const { return trial_params_; }

 private:
  std::vector<TrialRecord> trials_;
  std::vector<IntermediateValue> intermediate_;
  std::vector<TrialRecord> attempts_;
  std::vector<TrialParamRow> trial_params_;
  std::map<std::int64_t, size_t> row_of_;  // trial number -> index in trials_
  std::string stop_reason_;
};

}  // namespace cleansweep::testing
