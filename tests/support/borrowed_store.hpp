// A StudyStore that forwards to one the test keeps, so its rows stay readable after the code
// under test (which owns its store) is gone.
#pragma once

#include "study/study_store.hpp"

namespace cleansweep::testing {

class BorrowedStore : public StudyStore {
 public:
  explicit BorrowedStore(StudyStore* target) : target_(target) {}
  Status PutTrial(const TrialRecord& r) override { return target_->PutTrial(r); }
  Status AppendIntermediate(const IntermediateValue& v) override { return target_->AppendIntermediate(v); }
  Status AppendAttempt(const TrialRecord& r) override { return target_->AppendAttempt(r); }
  Status AppendTrialParam(const TrialParamRow& row) override { return target_->AppendTrialParam(row); }
  void DeferFlush(bool defer) override { target_->DeferFlush(defer); }
  Status Flush() override { return target_->Flush(); }
  Status RecordStopReason(const std::string& reason) override { return target_->RecordStopReason(reason); }

 private:
  StudyStore* target_;
};

}  // namespace cleansweep::testing
