#include "coordinator/trial_ledger.hpp"

#include <algorithm>

#include "samplers/pareto.hpp"

namespace cleansweep {

TrialLedger::Settled TrialLedger::Settle(const TrialRecord& record, int failures_before, bool queue_rerun) {
  Settled settled;
  settled.failures = failures_before + (config_.trial.retry_on.count(record.state) ? 1 : 0);
  if (record.state == TrialState::kInterrupted) {
    settled.fate = Fate::kInterrupted;
  } else if (record.state == TrialState::kPaused) {
    settled.fate = Fate::kPaused;
    TrialRecord evidence = record;
    evidence.output_tail.clear();
    history_->paused[record.number] = std::move(evidence);
    return settled;
  } else if (config_.trial.retry_on.count(record.state) && settled.failures <= config_.trial.retries) {
    settled.fate = Fate::kRetry;
  }
  if (settled.fate != Fate::kFinal && queue_rerun) {
    reruns_.push_back({record.number, record.params, record.attempt + 1, settled.failures, record.enqueued, {}});
    // Cut off after a checkpoint: it goes on from there under its own number.
    if (settled.fate == Fate::kInterrupted && record.checkpoint_step >= 0) reruns_.back().continues = record;
  }
  if (settled.fate == Fate::kInterrupted) return settled;
  if (settled.fate == Fate::kFinal) {
    ++finished_;
    ++since_best_;
    if (record.state == TrialState::kPruned) ++pruned_;
  }
  if (record.state == TrialState::kComplete && record.infeasible()) {
    ++complete_;
    ++infeasible_;
    ClearStaleFlag(record);  // the constraints may have changed on resume
  } else if (record.state == TrialState::kComplete && config_.study.multi_objective() &&
             record.values.size() == config_.study.metrics.size()) {
    ++complete_;
    if (AddToFront(record)) since_best_ = 0;
  } else if (record.state == TrialState::kComplete && record.value && !config_.study.multi_objective()) {
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

bool TrialLedger::AddToFront(const TrialRecord& record) {
  const std::vector<Metric>& metrics = config_.study.metrics;
  const Point point = Minimized(metrics, record.values);
  bool improves = true;
  for (const TrialRecord& member : front_) {
    const Point other = Minimized(metrics, member.values);
    if (Dominates(other, point)) {
      ClearStaleFlag(record);
      return false;
    }
    improves = improves && !WeaklyDominates(other, point);
  }
  auto left = std::stable_partition(front_.begin(), front_.end(), [&](const TrialRecord& member) {
    return !Dominates(point, Minimized(metrics, member.values));
  });
  for (auto it = left; it != front_.end(); ++it) {
    it->pareto = false;
    front_changes_[it->number] = *it;
  }
  front_.erase(left, front_.end());
  TrialRecord joined = record;
  joined.pareto = true;
  front_.push_back(joined);
  front_changes_[record.number] = std::move(joined);
  return improves;
}

void TrialLedger::ClearStaleFlag(const TrialRecord& record) {
  if (!record.pareto) return;
  TrialRecord changed = record;
  changed.pareto = false;
  front_changes_[record.number] = std::move(changed);
}

std::vector<TrialRecord> TrialLedger::TakeFrontChanges() {
  std::vector<TrialRecord> out;
  for (auto& [number, record] : front_changes_) out.push_back(std::move(record));
  front_changes_.clear();
  return out;
}

TrialRecord TrialLedger::TakePaused(std::int64_t number) {
  const auto it = history_->paused.find(number);
  TrialRecord record = std::move(it->second);
  history_->paused.erase(it);
  return record;
}

TrialLedger::Rerun TrialLedger::TakeRerun() {
  Rerun rerun = std::move(reruns_.front());
  reruns_.pop_front();
  return rerun;
}

}  // namespace cleansweep
