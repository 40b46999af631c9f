// Fault injection for the two outside worlds the coordinator writes to, in the manner of
// leveldb's fault-injection environment: each passes calls through to a real implementation until
// its Nth call of the chosen kind, which fails with an IoError, as a full disk or a lost peer does.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "study/study_store.hpp"
#include "transport/transport.hpp"

namespace cleansweep::testing {

// A store that, like the HDF5 file, makes rows durable only at Flush(); `durable()` is what a
// reader would find after a crash. Call `fail` of kind `kind` (1-based) fails, and so does every
// later call of that kind (a disk stays full).
class FaultyStore : public StudyStore {
 public:
  enum class Call { kPutTrial, kAppendIntermediate, kFlush };
  FaultyStore(Call kind, int fail) : kind_(kind), fail_(fail) {}

  Status PutTrial(const TrialRecord& record) override {
    CS_RETURN_IF_ERROR(Count(Call::kPutTrial, "PutTrial"));
    pending_trials_.push_back(record);
    return deferred_ ? Status::Ok() : Flush();
  }
  Status AppendIntermediate(const IntermediateValue& value) override {
    CS_RETURN_IF_ERROR(Count(Call::kAppendIntermediate, "AppendIntermediate"));
    pending_values_.push_back(value);
    return deferred_ ? Status::Ok() : Flush();
  }
  Status AppendAttempt(const TrialRecord&) override { return Status::Ok(); }
  Status AppendTrialParam(const TrialParamRow&) override { return Status::Ok(); }
  void DeferFlush(bool defer) override { deferred_ = defer; }
  // Only a flush that writes something counts (and can fail): how many idle turns a loaded
  // machine adds before the first result must not decide which flush the fault hits.
  Status Flush() override {
    if (pending_trials_.empty() && pending_values_.empty()) return Status::Ok();
    CS_RETURN_IF_ERROR(Count(Call::kFlush, "Flush"));
    for (const TrialRecord& r : pending_trials_) durable_[r.number] = r;
    values_ += pending_values_.size();
    pending_trials_.clear();
    pending_values_.clear();
    return Status::Ok();
  }

  const std::map<std::int64_t, TrialRecord>& durable() const { return durable_; }
  bool failed() const { return count_ >= fail_; }

 private:
  Status Count(Call call, const char* name) {
    if (call != kind_ || ++count_ < fail_) return Status::Ok();
    return Status::IoError(std::string("injected fault: ") + name + " #" + std::to_string(count_) +
                           " failed (No space left on device)");
  }

  Call kind_;
  int fail_;
  int count_ = 0;
  bool deferred_ = false;
  std::vector<TrialRecord> pending_trials_;
  std::vector<IntermediateValue> pending_values_;
  std::map<std::int64_t, TrialRecord> durable_;
  size_t values_ = 0;
};

// A transport whose Nth Send (1-based) fails once; the others go through, so every rank can
// still be told to stop.
class FaultyTransport : public Transport {
 public:
  FaultyTransport(Transport* inner, int fail) : inner_(inner), fail_(fail) {}
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  Status Send(int dest, const Message& message) override {
    if (++sends_ == fail_) {
      return Status::IoError("injected fault: send #" + std::to_string(sends_) + " to rank " + std::to_string(dest) +
                             " failed");
    }
    return inner_->Send(dest, message);
  }
  Result<std::optional<Envelope>> Receive(Millis max_wait) override { return inner_->Receive(max_wait); }

 private:
  Transport* inner_;
  int fail_;
  int sends_ = 0;
};

}  // namespace cleansweep::testing
