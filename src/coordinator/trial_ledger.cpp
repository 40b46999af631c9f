#include "coordinator/trial_ledger.hpp"

namespace cleansweep {

TrialLedger::Settled TrialLedger::Settle(const TrialRecord& record, int failures_before, bool queue_rerun) {
  Settled settled;
  settled.failures = failures_before + (config_.trial.retry_on.count(record.state) ? 1 : 0);
  if (record.state == TrialState::kInterrupted) {
    settled.fate = Fate::kInterrupted;
  } else if (config_.trial.retry_on.count(record.state) && settled.failures <= config_.trial.retries) {
    settled.fate = Fate::kRetry;
  }
  if (settled.fate != Fate::kFinal && queue_rerun) {
    reruns_.push_back({record.number, record.params, record.attempt + 1, settled.failures, record.enqueued});
  }
  if (settled.fate == Fate::kInterrupted) return settled;
  if (settled.fate == Fate::kFinal) {
    ++finished_;
    ++since_best_;
    if (record.state == TrialState::kPruned) ++pruned_;
  }
  if (record.state == TrialState::kComplete && record.value) {
    ++complete_;
    const bool better = !best_ || (config_.study.direction == Direction::kMaximize ? *record.value > *best_->value
                                                                                   : *record.value < *best_->value);
    if (better) {
      best_ = record;
      since_best_ = 0;
    }
  }
  TrialRecord evidence = record;
  evidence.output_tail.clear();  // the sampler needs no logs
  history_->finished.push_back(std::move(evidence));
  return settled;
}

TrialLedger::Rerun TrialLedger::TakeRerun() {
  Rerun rerun = std::move(reruns_.front());
  reruns_.pop_front();
  return rerun;
}

}  // namespace cleansweep
