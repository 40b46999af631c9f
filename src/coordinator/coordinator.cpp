#include "coordinator/coordinator.hpp"

#include <algorithm>

namespace cleansweep {
namespace {

bool Better(double a, double b, Direction direction) { return direction == Direction::kMaximize ? a > b : a < b; }

}  // namespace

Coordinator::Coordinator(const StudyConfig& config, Transport* transport, Sampler* sampler, const Clock* clock,
                         Progress* progress, CoordinatorTiming timing)
    : config_(config),
      transport_(transport),
      sampler_(sampler),
      clock_(clock),
      progress_(progress),
      timing_(timing),
      workers_(static_cast<size_t>(transport->size())) {
  target_ = config.study.n_trials;
  pruner_ = MakePruner(config.pruner, config.study.direction);
  if (const auto capacity = sampler->Capacity(); capacity && *capacity < target_) target_ = *capacity;
}

Result<Envelope> Coordinator::ReceiveOrFail(Millis max_wait, const char* waiting_for) {
  Result<std::optional<Envelope>> got = transport_->Receive(max_wait);
  if (!got.ok()) return got.status();
  if (!got->has_value()) {
    return Status::RuntimeError(std::string("no worker answered within ") + FormatDuration(max_wait) +
                                " while waiting for " + waiting_for);
  }
  return std::move(**got);
}

Status Coordinator::SetUpWorkers(const std::string& trials_root) {
  const int n = transport_->size() - 1;
  for (int seen = 0; seen < n;) {  // every worker says hello before it gets the config
    Result<Envelope> e = ReceiveOrFail(timing_.setup_timeout, "workers to start");
    if (!e.ok()) return e.status();
    if (const auto* hello = std::get_if<HelloMsg>(&e->message)) {
      workers_[static_cast<size_t>(e->source)].host = hello->host;
      ++seen;
    }
  }
  for (int rank = 1; rank <= n; ++rank) {
    CS_RETURN_IF_ERROR(transport_->Send(rank, SetupMsg{config_.yaml_text, trials_root}));
  }
  std::string errors;
  int gpus = 0;
  for (int seen = 0; seen < n;) {
    Result<Envelope> e = ReceiveOrFail(timing_.setup_timeout, "workers to set up");
    if (!e.ok()) return e.status();
    const auto* ready = std::get_if<ReadyMsg>(&e->message);
    if (!ready) continue;
    ++seen;
    WorkerSlot& slot = workers_[static_cast<size_t>(e->source)];
    slot.present = ready->ok;
    slot.gpu = ready->gpu;
    gpus += ready->gpu.empty() ? 0 : 1;
    if (!ready->ok && errors.empty()) {
      errors = "worker rank " + std::to_string(e->source) + " on " + slot.host + ": " + ready->error;
    }
  }
  if (!errors.empty()) return Status::InvalidInput(errors);
  if (gpus == 0) progress_->Message("no GPU on any worker node: trials run on the CPU");
  return Status::Ok();
}

bool Coordinator::BudgetReached() const {
  return config_.study.time_budget &&
         clock_->Now() - started_ >= static_cast<double>(config_.study.time_budget->count()) / 1e3;
}

bool Coordinator::MoreToLaunch() const { return !stopping_ && !sampler_exhausted_ && next_number_ < target_; }

Status Coordinator::Dispatch() {
  for (size_t rank = 1; rank < workers_.size() && MoreToLaunch(); ++rank) {
    WorkerSlot& slot = workers_[rank];
    if (!slot.present || slot.trial >= 0) continue;
    const double asked = clock_->Now();
    const bool enqueued = next_enqueued_ < config_.enqueue.size();
    std::optional<ParamSet> params =
        enqueued ? CompleteEnqueued(*sampler_, config_, config_.enqueue[next_enqueued_++], next_number_, history_)
                 : sampler_->Ask(next_number_, history_);
    if (!params) {
      sampler_exhausted_ = true;
      target_ = next_number_;
      break;
    }
    dispatched_[next_number_] = {enqueued, (clock_->Now() - asked) * 1e3};
    curves_[next_number_];  // running, no values yet
    AssignMsg assign{next_number_, *params, 1};
    CS_RETURN_IF_ERROR(transport_->Send(static_cast<int>(rank), assign));
    history_.running[next_number_] = std::move(*params);
    slot.trial = next_number_++;
  }
  return Status::Ok();
}

ProgressState Coordinator::State() const {
  ProgressState s;
  s.done = summary_.finished;
  s.total = target_;
  s.running = static_cast<std::int64_t>(history_.running.size());
  s.failed = summary_.finished - summary_.complete;
  if (summary_.best) {
    s.best_value = summary_.best->value;
    s.best_number = summary_.best->number;
  }
  s.elapsed_s = clock_->Now() - started_;
  return s;
}

Status Coordinator::RecordResult(int source, TrialRecord record) {
  WorkerSlot& slot = workers_[static_cast<size_t>(source)];
  if (slot.trial != record.number) {
    return Status::RuntimeError("worker rank " + std::to_string(source) + " reported trial " +
                                std::to_string(record.number) + " but was running " + std::to_string(slot.trial));
  }
  slot.trial = -1;
  history_.running.erase(record.number);
  const auto how = dispatched_.find(record.number);
  record.enqueued = how->second.enqueued;
  record.sampler_ms = how->second.sampler_ms;
  dispatched_.erase(how);
  CS_RETURN_IF_ERROR(store_->AppendTrial(record));  // durable before anything else happens
  curves_[record.number].state = record.state;
  prune_sent_.erase(record.number);
  ++summary_.finished;
  if (record.state == TrialState::kComplete && record.value) {
    ++summary_.complete;
    if (!summary_.best || Better(*record.value, *summary_.best->value, config_.study.direction)) {
      summary_.best = record;
    }
  }
  progress_->TrialFinished(record, State());
  record.output_tail.clear();  // the sampler's history needs no logs
  history_.finished.push_back(std::move(record));
  return Status::Ok();
}

Status Coordinator::RecordReport(int source, const IntermediateValue& v) {
  CS_RETURN_IF_ERROR(store_->AppendIntermediate(v));
  TrialCurve& curve = curves_[v.trial];
  curve.values[v.step] = v.value;
  if (!pruner_ || prune_sent_.count(v.trial) || curve.state != TrialState::kRunning) return Status::Ok();
  std::optional<std::string> reason = pruner_->ShouldPrune(v.trial, v.step, curves_);
  if (!reason) return Status::Ok();
  prune_sent_.insert(v.trial);
  return transport_->Send(source, PruneMsg{v.trial, *reason});
}

Status Coordinator::Handle(const Envelope& envelope) {
  if (const auto* report = std::get_if<ReportMsg>(&envelope.message)) {
    return RecordReport(envelope.source, report->value);
  }
  if (const auto* result = std::get_if<ResultMsg>(&envelope.message)) {
    return RecordResult(envelope.source, result->record);
  }
  return Status::RuntimeError(std::string("unexpected '") + TagName(TagOf(envelope.message)) + "' message from rank " +
                              std::to_string(envelope.source));
}

void Coordinator::StopAll(const std::string& reason) {
  for (int rank = 1; rank < transport_->size(); ++rank) transport_->Send(rank, StopMsg{reason});
}

Result<RunSummary> Coordinator::Run(const StoreOpener& open_store, const std::string& trials_root) {
  Status status = SetUpWorkers(trials_root);
  if (status.ok()) {
    Result<std::unique_ptr<StudyStore>> store = open_store();
    status = store.status();
    if (store.ok()) store_ = std::move(*store);
  }
  if (!status.ok()) {
    StopAll("setup failed");
    return status;
  }
  started_ = clock_->Now();
  while (status.ok()) {
    if (!stopping_ && BudgetReached()) {
      stopping_ = summary_.budget_reached = true;
      progress_->Message("time budget of " + FormatDuration(*config_.study.time_budget) +
                         " reached: stopping running trials");
      StopAll("the study's time budget was reached");
    }
    status = Dispatch();
    if (!status.ok() || (history_.running.empty() && !MoreToLaunch())) break;
    Result<std::optional<Envelope>> got = transport_->Receive(timing_.tick);
    if (!got.ok()) {
      status = got.status();
    } else if (got->has_value()) {
      status = Handle(**got);
    } else {
      progress_->Tick(State());
    }
  }
  if (!stopping_) StopAll(status.ok() ? "the study is complete" : "the coordinator failed");
  if (!status.ok()) return status;
  progress_->Finish(State());
  return summary_;
}

}  // namespace cleansweep
