#include "coordinator/coordinator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include <nlohmann/json.hpp>

#include "coordinator/gang_outcome.hpp"
#include "coordinator/loop_watchdog.hpp"
#include "pruners/pbt_pruner.hpp"
#include "space/trial_defined.hpp"
#include "util/number_format.hpp"

namespace cleansweep {
namespace {

// Messages handled in one turn of the loop, and so in one group commit, at most.
constexpr int kMaxMessagesPerTurn = 256;

// After a failure, how long past trial.kill_grace the workers have to send their last results.
constexpr Millis kWindDownSlack = Millis(10'000);

// workers.queue: auto decides on the median run time of this many recent trials.
constexpr size_t kRecentTrials = 32;

// Gangs: trials drawn ahead and waiting for workers at most, so that smaller ones can backfill
// while the first waits (docs/multi-gpu.md).
constexpr size_t kGangLookahead = 8;

}  // namespace

Coordinator::Coordinator(const StudyConfig& config, Transport* transport, Sampler* sampler, const Clock* clock,
                         Progress* progress, CoordinatorTiming timing)
    : config_(config),
      transport_(transport),
      sampler_(sampler),
      clock_(clock),
      progress_(progress),
      timing_(timing),
      workers_(static_cast<size_t>(transport->size())),
      idle_(transport->size()),
      queueable_(transport->size()) {
  // A worker's set-up includes loading the fork server's plugin, which may take that long.
  if (config.trial.launcher == LauncherKind::kForkServer) {
    timing_.setup_timeout = std::max(timing_.setup_timeout, config.trial.prepare_timeout + Millis(60'000));
  }
  target_ = config.study.n_trials;
  // Population-based training schedules its members as a pruner whose rungs pause them.
  pruner_ = config.sampler.kind == "pbt" ? std::make_unique<PbtPruner>(config.sampler, config.study.direction)
                                         : MakePruner(config.pruner, config.study.direction);
  fresh_limit_ = sampler->FreshLimit().value_or(std::numeric_limits<std::int64_t>::max());
  if (const auto capacity = sampler->Capacity(); capacity && *capacity < target_) target_ = *capacity;
  target_ = ShardSize(config.study.shard, target_);  // this shard's part of the sweep's trial list
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
  std::set<std::string> isolation;               // "host: how", once each
  std::map<std::string, std::string> gpu_lines;  // host -> "GPUs on host (source): rank -> device, ..."
  std::set<std::string> gpu_notes;
  for (int seen = 0; seen < n;) {
    Result<Envelope> e = ReceiveOrFail(timing_.setup_timeout, "workers to set up");
    if (!e.ok()) return e.status();
    const auto* ready = std::get_if<ReadyMsg>(&e->message);
    if (!ready) continue;
    ++seen;
    WorkerSlot& slot = workers_[static_cast<size_t>(e->source)];
    slot.present = ready->ok;
    slot.gpu = ready->gpu;
    slot.address = ready->address;
    slot.port = ready->port;
    gpus += ready->gpu.empty() ? 0 : 1;
    if (ready->ok && !ready->isolation.empty()) isolation.insert(slot.host + ": " + ready->isolation);
    if (ready->ok && !ready->gpu.empty()) {
      std::string& line = gpu_lines[slot.host];
      line += (line.empty() ? "GPUs on " + slot.host + " (" + ready->gpu_source + "): " : ", ") + "rank " +
              std::to_string(e->source) + " -> " + ready->gpu;
    }
    if (ready->ok && !ready->gpu_note.empty()) gpu_notes.insert("warning: " + slot.host + ": " + ready->gpu_note);
    if (!ready->ok && errors.empty()) {
      errors = "worker rank " + std::to_string(e->source) + " on " + slot.host + ": " + ready->error;
    }
  }
  if (!errors.empty()) return Status::InvalidInput(errors);
  for (size_t rank = 1; rank < workers_.size(); ++rank) {
    if (workers_[rank].present) idle_.PushBack(static_cast<int>(rank));
    present_workers_ += workers_[rank].present ? 1 : 0;
  }
  if (config_.trial.gangs()) {
    std::map<std::string, std::vector<int>> by_host;  // nodes in the order of their first rank
    std::vector<std::string> order;
    for (size_t rank = 1; rank < workers_.size(); ++rank) {
      if (!workers_[rank].present) continue;
      auto [it, added] = by_host.try_emplace(workers_[rank].host);
      if (added) order.push_back(workers_[rank].host);
      it->second.push_back(static_cast<int>(rank));
    }
    std::vector<std::vector<int>> nodes;
    for (const std::string& host : order) nodes.push_back(by_host[host]);
    planner_ = std::make_unique<GangPlanner>(std::move(nodes), config_.trial.allow_split);
    CS_RETURN_IF_ERROR(CheckGangsFit());
  }
  for (const std::string& line : isolation) progress_->Message("trials on " + line);
  for (const auto& [host, line] : gpu_lines) progress_->Message(line);
  for (const std::string& note : gpu_notes) progress_->Message(note);
  if (gpus == 0) progress_->Message("no GPU on any worker node: trials run on the CPU");
  return Status::Ok();
}

bool Coordinator::BudgetReached() const { return UntilBudget() == Millis(0); }

Millis Coordinator::UntilBudget() const {
  if (!config_.study.time_budget) return Millis::max();
  const double left_s = static_cast<double>(config_.study.time_budget->count()) / 1e3 - (clock_->Now() - started_);
  return left_s <= 0 ? Millis(0) : Millis(static_cast<Millis::rep>(std::ceil(left_s * 1e3)));
}

std::int64_t Coordinator::OwnRunning() const {
  return static_cast<std::int64_t>(history_.running.size() - shared_running_.size());
}

std::int64_t Coordinator::Taken() const {
  return ledger_.finished() + OwnRunning() + ledger_.rerun_count() + ledger_.paused_count() +
         (shared_budget_ ? shared_taken_ : 0);
}

bool Coordinator::Room() const { return Taken() < target_; }

void Coordinator::Share(SiblingSource* siblings) {
  siblings_ = siblings;
  share_interval_ = share_warned_ = static_cast<double>(config_.study.share_every.count()) / 1e3;
  if (!siblings_ || ShardsPartitionSweep(config_.sampler.kind)) return;
  // The sweep's n_trials, not this shard's part of the list: the shards between them draw it.
  shared_budget_ = true;
  target_ = config_.study.n_trials;
  if (const auto capacity = sampler_->Capacity(); capacity && *capacity < target_) target_ = *capacity;
}

std::int64_t Coordinator::ForeignNumber(const std::string& source, std::int64_t number) {
  const auto [it, added] = source_ids_.emplace(source, static_cast<std::int64_t>(source_ids_.size()));
  return -((it->second + 1) << 32) - 1 - number;
}

std::string Coordinator::TrialName(std::int64_t number) const {
  if (number >= 0) return "trial " + std::to_string(number);
  const auto it = foreign_names_.find(number);
  return it == foreign_names_.end() ? "a trial of another shard" : it->second;
}

void Coordinator::WarmStart(const std::vector<WarmStartFile>& files) {
  for (const WarmStartFile& file : files) {
    for (const TrialRecord& r : file.used) {
      TrialRecord evidence = r;
      evidence.number = ForeignNumber("warm start " + file.path, r.number);
      evidence.retry_of = -1;
      history_.finished.push_back(std::move(evidence));
      ++warm_trials_;
    }
  }
}

// A slow file system (a busy NFS server, a Lustre OST under load) must not turn this shard into a
// reader of other shards' files: reads stay below a tenth of its time, however long they take.
void Coordinator::PaceSharing(double took) {
  const double every = static_cast<double>(config_.study.share_every.count()) / 1e3;
  const double paced = took > every / 10 ? 10 * took : every;
  const auto text = [](double seconds) { return FormatDuration(Millis(static_cast<Millis::rep>(seconds * 1e3))); };
  if (paced > every) {
    if (paced > 1.5 * share_warned_) {  // said again only when the reads grow much slower still
      progress_->Message("warning: sharing: reading the sweep's other files took " + text(took) +
                         ", more than a tenth of study.share_every (" + text(every) + "): reading them every " +
                         text(paced) + " instead (is the file system slow or busy?)");
      share_warned_ = paced;
    }
    share_interval_ = paced;
  } else if (share_interval_ > every) {
    progress_->Message("sharing: reading the sweep's other files is fast again: every " + text(every));
    share_interval_ = share_warned_ = every;
  }
}

Status Coordinator::ReadSiblings() {
  const double began = clock_->Now();
  const SiblingSource::Scan scan = siblings_->Read();
  const double took = clock_->Now() - began;
  summary_.share_ms.push_back(took * 1e3);
  for (const std::string& line : scan.warnings) progress_->Message("warning: sharing: " + line);
  PaceSharing(took);
  if (!scan.changed) return Status::Ok();
  for (const std::int64_t key : shared_running_) history_.running.erase(key);
  shared_running_.clear();
  shared_taken_ = 0;
  std::int64_t live = 0, finished = 0;
  for (const auto& [path, file] : siblings_->files()) {
    live += file.live ? 1 : 0;
    std::set<std::int64_t> retried;  // trials a later attempt replaced: the chain counts once
    for (const TrialRecord& r : file.trials) {
      if (r.retry_of >= 0) retried.insert(r.retry_of);
    }
    for (const TrialRecord& r : file.trials) {
      const std::int64_t key = ForeignNumber(path, r.number);
      const bool open = r.state == TrialState::kRunning || r.state == TrialState::kPaused;
      if (open || r.state == TrialState::kInterrupted) {
        // A killed shard's RUNNING rows run nowhere: they run again when it resumes.
        if (!file.live) continue;
        ++shared_taken_;
        if (open) {
          history_.running[key] = r.params;
          shared_running_.push_back(key);
        }
        continue;
      }
      ++finished;
      if (!retried.count(r.number)) ++shared_taken_;
      if (!shared_seen_.insert(key).second) continue;
      foreign_names_[key] = "trial " + std::to_string(r.number) + " of " + path;
      TrialRecord evidence = r;
      evidence.number = key;
      evidence.retry_of = -1;
      // Its chain's retries are its shard's business: here every outcome is final.
      sweep_ledger_.Settle(evidence, config_.trial.retries, false);
      history_.finished.push_back(std::move(evidence));
    }
  }
  const auto files = static_cast<std::int64_t>(siblings_->files().size());
  // Said when the sweep's files come or go; nothing for a study that has none beside it.
  if ((files != shared_files_ || live != shared_live_) && (files > 0 || shared_files_ > 0)) {
    progress_->Message("sharing: " + std::to_string(files) + " other files of the sweep (" + std::to_string(live) +
                       " running), " + std::to_string(finished) + " trials finished there" +
                       (shared_budget_ ? "; the sweep has " + std::to_string(Taken()) + " of its " +
                                             std::to_string(target_) + " trials"
                                       : std::string()));
    shared_files_ = files;
    shared_live_ = live;
  }
  return CheckStopWhen();
}

bool Coordinator::FreshLeft() const {
  return !sampler_exhausted_ && stop_when_reason_.empty() && fresh_ < fresh_limit_ && Room();
}

// Once study.stop_when is met, trials that would run again (interrupted, retries) are not work left.
bool Coordinator::WorkLeft() const {
  return (ledger_.HasRerun() && stop_when_reason_.empty()) || OwnRunning() > 0 || FreshLeft() ||
         Promotable().has_value();
}

bool Coordinator::MoreFresh() const { return !stopping_ && FreshLeft(); }

bool Coordinator::MoreToLaunch() const {
  return !stopping_ && stop_when_reason_.empty() && (ledger_.HasRerun() || NextPromotion() || MoreFresh());
}

const std::optional<Promotion>& Coordinator::Promotable() const {
  if (promotion_stale_) {
    const bool any = pruner_ && ledger_.paused_count() > 0 && stop_when_reason_.empty();
    promotion_ = any ? pruner_->Promote(curves_) : std::nullopt;
    promotion_stale_ = false;
  }
  return promotion_;
}

std::optional<Promotion> Coordinator::NextPromotion() const { return stopping_ ? std::nullopt : Promotable(); }

Status Coordinator::SettlePaused() {
  std::vector<std::int64_t> numbers;
  for (const auto& [number, record] : history_.paused) numbers.push_back(number);
  for (const std::int64_t number : numbers) {
    TrialRecord record = ledger_.TakePaused(number);
    record.state = TrialState::kPruned;
    record.reason = "pruned: " + record.reason + "; no promotion came before the study ended";
    CS_RETURN_IF_ERROR(StageRow(record));
    if (config_.trial.checkpoint_keep == CheckpointKeep::kNone && record.worker > 0) {
      pending_releases_.push_back(
          {record.worker, ReleaseMsg{number, ReleaseBound(number, std::numeric_limits<std::int64_t>::max())}});
    }
    curves_[number].state = TrialState::kPruned;
    ledger_.Settle(record, 0);
    if (siblings_) sweep_ledger_.Settle(record, 0, false);
  }
  promotion_stale_ = true;
  progress_->Message(std::to_string(numbers.size()) +
                     " trials paused at rungs were never promoted: they are recorded PRUNED");
  return Status::Ok();
}

Status Coordinator::CheckStopWhen() {
  const StopWhen& when = config_.study.stop_when;
  if (!stop_when_reason_.empty() || (!when.target && !when.no_improvement)) return Status::Ok();
  const TrialLedger& judged = Judged();
  const std::optional<TrialRecord>& best = judged.best();
  const bool maximize = config_.study.direction == Direction::kMaximize;
  const auto value = [&](double v) { return config_.study.metric + " = " + FormatDouble(v); };
  if (when.target && best && (maximize ? *best->value >= *when.target : *best->value <= *when.target)) {
    stop_when_reason_ = "the target was reached: " + TrialName(best->number) + " has " + value(*best->value) +
                        " (study.stop_when.target: " + FormatDouble(*when.target) + ")";
  } else if (when.no_improvement && judged.since_best() >= *when.no_improvement) {
    const size_t front = judged.pareto_front().size();
    stop_when_reason_ = "no improvement in the last " + std::to_string(judged.since_best()) + " trials" +
                        (siblings_ ? " of the sweep" : "") +
                        (best        ? " (best: " + TrialName(best->number) + ", " + value(*best->value) + ")"
                         : front > 0 ? " (the Pareto front has " + std::to_string(front) + " trials)"
                                     : std::string(" (none completed)")) +
                        " (study.stop_when.no_improvement: " + std::to_string(*when.no_improvement) + ")";
  } else {
    return Status::Ok();
  }
  summary_.stopped_early = stop_when_reason_;
  promotion_stale_ = true;  // paused trials are promoted no more
  const std::int64_t running = OwnRunning();
  progress_->Message("stopping early: " + stop_when_reason_ + "; no new trials" +
                     (running > 0 ? ", the " + std::to_string(running) + " running finish" : std::string()));
  return store_ ? store_->RecordStopReason(stop_when_reason_) : Status::Ok();
}

size_t Coordinator::QueueLimit() const { return static_cast<size_t>(config_.workers.queue.value_or(1)); }

int Coordinator::QueueDepth() const {
  if (planner_) return 0;  // a gang starts on all its workers at once: none waits on a busy one
  if (config_.workers.queue) return *config_.workers.queue;
  return short_trials_ ? 1 : 0;
}

void Coordinator::NoteDuration(const TrialRecord& record) {
  if (config_.workers.queue || !(record.end_time >= record.start_time)) return;
  ++durations_noted_;
  recent_seconds_.push_back(record.end_time - record.start_time);
  if (recent_seconds_.size() > kRecentTrials) recent_seconds_.pop_front();
  // The first trials to end are the shortest of the first round: with many workers and run times
  // that vary, they say nothing of the median. Only once as many trials have ended as there are
  // workers (every trial ends once: from then on those that end are a fair sample) may auto queue.
  if (durations_noted_ < std::max<std::int64_t>(4, present_workers_)) return;
  std::vector<double> seconds(recent_seconds_.begin(), recent_seconds_.end());
  const auto middle = seconds.begin() + static_cast<std::ptrdiff_t>(seconds.size() / 2);
  std::nth_element(seconds.begin(), middle, seconds.end());
  short_trials_ = *middle < kShortTrialSeconds;
}

size_t Coordinator::FreeSlots() const {
  // A busy worker's queue is counted once: one trial per worker and turn keeps the queue short.
  return idle_.size() + (QueueDepth() > 0 ? queueable_.size() : 0);
}

int Coordinator::TakeFreeRank() {
  RankQueue& from = idle_.empty() ? queueable_ : idle_;
  const int rank = from.front();
  from.PopFront();
  return rank;
}

Status Coordinator::Dispatch() {
  if (planner_) return DispatchGangs();
  // Many free workers and a sampler that fits a model per ask (TPE): one fit for all of them.
  std::deque<ParamSet> batch;
  double batch_ms_each = 0;
  const size_t free_slots = FreeSlots();
  if (sampler_->AsksInBatches() && !ledger_.HasRerun() && !NextPromotion() && free_slots > 1 && MoreFresh()) {
    const std::int64_t left = target_ - Taken();
    std::vector<std::int64_t> positions;
    for (std::int64_t i = 0; i < left && positions.size() < free_slots; ++i) {
      const std::int64_t position = ShardPosition(config_.study.shard, fresh_ + i);
      if (position < static_cast<std::int64_t>(config_.enqueue.size())) break;  // those go one by one
      positions.push_back(position);
    }
    if (positions.size() > 1) {
      const double asked = clock_->Now();
      std::vector<ParamSet> proposals = sampler_->AskBatch(positions, history_);
      batch_ms_each = (clock_->Now() - asked) * 1e3 / static_cast<double>(proposals.size());
      batch.assign(std::make_move_iterator(proposals.begin()), std::make_move_iterator(proposals.end()));
    }
  }
  // Free workers wait in queues, so a turn costs the same with 16 workers or 65,536. Each busy
  // worker gets at most one more trial per turn.
  for (size_t handed = 0; handed < free_slots && (!idle_.empty() || !queueable_.empty()) && MoreToLaunch(); ++handed) {
    const int rank = TakeFreeRank();
    TrialRecord running;
    Result<bool> drawn = NextTrial(&running, &batch, batch_ms_each);
    if (!drawn.ok() || !*drawn) {  // the worker was taken for nothing: it stays free
      (workers_[static_cast<size_t>(rank)].trials.empty() ? idle_ : queueable_).PushBack(rank);
      if (!drawn.ok()) return drawn.status();
      break;
    }
    CS_RETURN_IF_ERROR(Launch(std::move(running), {rank}));
  }
  return Status::Ok();
}

Result<bool> Coordinator::NextTrial(TrialRecord* out, std::deque<ParamSet>* batch, double batch_ms_each) {
  TrialRecord& running = *out;
  running.number = next_number_;
  const double asked = clock_->Now();
  if (ledger_.HasRerun()) {
    TrialLedger::Rerun rerun = ledger_.TakeRerun();
    if (rerun.continues) {  // its own number and row, from its checkpoint; the ended attempt is kept apart
      CS_RETURN_IF_ERROR(store_->AppendAttempt(*rerun.continues));
      running = ContinuationOf(*rerun.continues, rerun.attempt);
    } else {
      running.params = std::move(rerun.params);
      running.attempt = rerun.attempt;
      running.retry_of = rerun.of;
      running.enqueued = rerun.enqueued;
    }
    failures_[running.number] = rerun.failures;
  } else if (std::optional<Promotion> promotion = NextPromotion();
             promotion && (pruner_->PromotesFirst() || !MoreFresh())) {
    if (promotion->parent >= 0 && Room()) {
      CS_RETURN_IF_ERROR(Replace(*promotion, &running));
    } else {  // on from its checkpoint, the pause kept apart
      const TrialRecord paused = ledger_.TakePaused(promotion->number);
      promotion_stale_ = true;
      CS_RETURN_IF_ERROR(store_->AppendAttempt(paused));
      running = ContinuationOf(paused, paused.attempt + 1);
      progress_->Message(
          "trial " + std::to_string(paused.number) + " " +
          (promotion->parent >= 0 ? "goes on: study.n_trials allows no trial to replace it" : promotion->reason) +
          "; it goes on from its checkpoint at step " + std::to_string(paused.checkpoint_step));
    }
  } else {
    // The trial's place in the (unsharded) sweep's list: enqueued configurations come first.
    const std::int64_t position = ShardPosition(config_.study.shard, fresh_);
    const bool enqueued = position < static_cast<std::int64_t>(config_.enqueue.size());
    std::optional<ParamSet> params;
    bool from_batch = false;
    if (enqueued) {
      params = CompleteEnqueued(*sampler_, config_, config_.enqueue[static_cast<size_t>(position)], position, history_);
    } else if (batch && !batch->empty()) {
      params = std::move(batch->front());
      batch->pop_front();
      from_batch = true;
    } else {
      params = sampler_->Ask(position, history_);
    }
    if (!params) {
      sampler_exhausted_ = true;
      return false;
    }
    ++fresh_;
    running.params = std::move(*params);
    running.enqueued = enqueued;
    running.sampler_ms = from_batch ? batch_ms_each : (clock_->Now() - asked) * 1e3;
  }
  if (config_.sampler.kind == "pbt") lineage_.emplace(running.number, std::pair{running.params, running.generation});
  history_.running[running.number] = running.params;  // pending, for the sampler, from now on
  if (running.number == next_number_) ++next_number_;
  return true;
}

Status Coordinator::Launch(TrialRecord running, const std::vector<int>& ranks) {
  const auto lead = static_cast<size_t>(ranks.front());
  WorkerSlot& slot = workers_[lead];
  running.start_time = clock_->Now();
  running.worker = ranks.front();
  running.host = slot.host;
  running.gpu = slot.gpu;
  // Only the declared parameters: those a trial defines it asks for as it runs (HandleSuggest).
  AssignMsg assign{running.number, Declared(running.params), running.attempt, running.resumed_from, running.parent, {}};
  if (ranks.size() > 1) {
    Gang& gang = gangs_[running.number];
    gang.ranks = ranks;
    gang.single = config_.trial.processes == GangProcesses::kSingle;
    running.gpus = static_cast<int>(ranks.size());
    running.workers = FormatRanks(ranks);
    running.gpu.clear();
    for (const int rank : ranks) {
      const std::string& gpu = workers_[static_cast<size_t>(rank)].gpu;
      if (!gpu.empty()) running.gpu += (running.gpu.empty() ? "" : ",") + gpu;
    }
    GangPlace place;
    place.size = static_cast<int>(ranks.size());
    place.master_addr = slot.address;
    place.master_port = slot.port;
    place.single = gang.single;
    place.gpus = running.gpu;
    // RANK in the order given (grouped by node); LOCAL_RANK within its node, GROUP_RANK its node's.
    std::map<int, int> on_node;  // node -> processes so far
    std::map<int, int> group;    // node -> its index in the gang
    for (const int rank : ranks) {
      const int node = planner_->node_of(rank);
      group.emplace(node, static_cast<int>(group.size()));
      ++on_node[node];
    }
    place.groups = static_cast<int>(group.size());
    std::map<int, int> seen;
    for (size_t i = 0; i < ranks.size(); ++i) {
      const int node = planner_->node_of(ranks[i]);
      place.rank = static_cast<int>(i);
      place.local_rank = seen[node]++;
      place.local_size = on_node[node];
      place.group_rank = group[node];
      assign.gang = place;
      pending_assigns_.push_back({ranks[i], assign});
      if (gang.single) break;  // one process, on the first worker; the others are held for it
    }
  } else {
    if (config_.trial.distributed) {  // size 1 in a study with trial.gpus: torchrun's environment all the same
      assign.gang.master_addr = slot.address;
      assign.gang.master_port = slot.port;
      assign.gang.single = config_.trial.processes == GangProcesses::kSingle;
      assign.gang.gpus = running.gpu;
    }
    pending_assigns_.push_back({ranks.front(), assign});
  }
  CS_RETURN_IF_ERROR(StageRow(running));                 // RUNNING in the file before it starts (CommitTurn sends it)
  curves_[running.number].state = TrialState::kRunning;  // no values yet, or a continued trial's so far
  for (const int rank : ranks) {
    WorkerSlot& held = workers_[static_cast<size_t>(rank)];
    held.trials.push_back(running.number);
    if (held.trials.size() > 1) ++queued_;
    if (held.trials.size() <= QueueLimit() && ranks.size() == 1) queueable_.PushBack(rank);
  }
  running_[running.number] = std::move(running);
  return Status::Ok();
}

Status Coordinator::DispatchGangs() {
  if (stopping_ || !stop_when_reason_.empty()) return SettleWaiting();
  // Trials drawn ahead of time, so that smaller ones can fill workers a larger one leaves free.
  const size_t lookahead = config_.workers.backfill ? kGangLookahead : 1;
  for (;;) {
    CS_RETURN_IF_ERROR(PlaceWaiting());
    const bool free_worker = idle_.size() > 0;
    if (!free_worker || waiting_.size() >= lookahead || !MoreToLaunch()) return Status::Ok();
    TrialRecord next;
    Result<bool> drawn = NextTrial(&next, nullptr, 0);
    if (!drawn.ok()) return drawn.status();
    if (!*drawn) return Status::Ok();
    waiting_.push_back(std::move(next));
  }
}

Status Coordinator::PlaceWaiting() {
  if (waiting_.empty() || idle_.empty()) return Status::Ok();
  GangPlanner::FreeByNode free = planner_->FreeNow([this](int rank) { return idle_.Contains(rank); });
  for (auto it = waiting_.begin(); it != waiting_.end() && !idle_.empty();) {
    const bool head = it == waiting_.begin();
    const int gpus = config_.trial.GpusFor(it->params);
    const std::vector<int> ranks = planner_->Place(gpus, free, head);
    if (ranks.empty()) {
      // The first in line holds workers from now on; without backfill no other trial may pass it.
      if (head) planner_->Reserve(it->number, gpus, free);
      if (head && !config_.workers.backfill) return Status::Ok();
      ++it;
      continue;
    }
    if (planner_->reserved_trial() == it->number) planner_->ClearReservation();
    planner_->Take(ranks, &free);
    for (const int rank : ranks) idle_.Erase(rank);
    TrialRecord trial = std::move(*it);
    it = waiting_.erase(it);
    CS_RETURN_IF_ERROR(Launch(std::move(trial), ranks));
  }
  return Status::Ok();
}

Status Coordinator::SettleWaiting() {
  if (waiting_.empty()) return Status::Ok();
  const std::string why = stopping_ ? "the study stopped" : "the study stopped early (study.stop_when)";
  for (TrialRecord& r : waiting_) {
    r.state = TrialState::kInterrupted;
    r.start_time = r.end_time = clock_->Now();
    r.reason = "interrupted: not started: " + why + " while it waited for " +
               std::to_string(config_.trial.GpusFor(r.params)) + " free workers (it runs on resume)";
    CS_RETURN_IF_ERROR(StageRow(r));
    history_.running.erase(r.number);
    curves_[r.number].state = r.state;
    const auto before = failures_.find(r.number);
    ledger_.Settle(r, before == failures_.end() ? 0 : before->second);
    if (before != failures_.end()) failures_.erase(before);
    pending_progress_.push_back({r, State(), ""});
  }
  waiting_.clear();
  planner_->ClearReservation();
  return Status::Ok();
}

Status Coordinator::CheckGangsFit() const {
  const int most = config_.trial.max_gpus;
  const std::string what = config_.trial.gpus_param.empty() ? "trial.gpus: " + std::to_string(most)
                                                            : "trial.gpus: \"{" + config_.trial.gpus_param +
                                                                  "}\" (up to " + std::to_string(most) + ")";
  if (most > present_workers_) {
    return Status::InvalidInput(what + " needs " + std::to_string(most) + " workers for one trial; this job has " +
                                std::to_string(present_workers_) + " (start it with at least " +
                                std::to_string(most + 1) + " ranks: mpirun -np " + std::to_string(most + 1) +
                                ", or srun --ntasks=" + std::to_string(most + 1) + ")");
  }
  if (config_.trial.processes == GangProcesses::kSingle && static_cast<size_t>(most) > planner_->largest_node()) {
    return Status::InvalidInput(what + " with trial.processes: single needs " + std::to_string(most) +
                                " workers on one node; the largest node of this job has " +
                                std::to_string(planner_->largest_node()) +
                                " (use trial.processes: per_gpu to span nodes, or more tasks per node)");
  }
  return Status::Ok();
}

Status Coordinator::FreeWorker(int source, std::int64_t number, bool check_sent) {
  WorkerSlot& slot = workers_[static_cast<size_t>(source)];
  if (slot.trials.empty() || slot.trials.front() != number || !running_.count(number) ||
      (check_sent && slot.handed_out == 0)) {
    return Status::RuntimeError("worker rank " + std::to_string(source) + " reported trial " + std::to_string(number) +
                                " but was running " +
                                (slot.trials.empty() ? std::string("none") : std::to_string(slot.trials.front())));
  }
  slot.trials.pop_front();
  if (check_sent) --slot.handed_out;
  if (slot.trials.empty()) {
    queueable_.Erase(source);
    idle_.PushBack(source);
  } else {
    --queued_;  // the next one in its queue runs now
    if (slot.trials.size() <= QueueLimit()) queueable_.PushBack(source);
  }
  return Status::Ok();
}

Status Coordinator::SendToTrial(std::int64_t number, int source, const Message& message) {
  const auto gang = gangs_.find(number);
  if (gang == gangs_.end()) return transport_->Send(source, message);
  for (const int rank : gang->second.ranks) {
    if (!gang->second.ended.count(rank)) CS_RETURN_IF_ERROR(transport_->Send(rank, message));
    if (gang->second.single) break;
  }
  return Status::Ok();
}

Result<std::optional<TrialRecord>> Coordinator::GangMemberEnded(int source, TrialRecord record) {
  Gang& gang = gangs_.at(record.number);
  const std::int64_t number = record.number;
  const bool failed = record.state != TrialState::kComplete;
  const bool lead = source == gang.ranks.front();
  const std::string said =
      "rank " + std::to_string(std::find(gang.ranks.begin(), gang.ranks.end(), source) - gang.ranks.begin()) +
      " of trial " + std::to_string(number) + " (worker " + std::to_string(source) + " on " + record.host + ") ended " +
      TrialStateName(record.state);
  gang.ended.emplace(source, std::move(record));
  const size_t processes = gang.single ? 1 : gang.ranks.size();
  if (gang.ended.size() < processes && !gang.aborted && (failed || lead)) {
    // One trial, one outcome: the rest stop now (a failure), or get trial.kill_grace to end
    // by themselves (rank 0 is done), then are stopped.
    gang.aborted = true;
    const AbortMsg abort{number, said, failed ? 0 : config_.trial.kill_grace.count()};
    for (const int rank : gang.ranks) {
      if (!gang.ended.count(rank)) CS_RETURN_IF_ERROR(transport_->Send(rank, abort));
    }
  }
  if (gang.ended.size() < processes) return std::optional<TrialRecord>();
  if (gang.single) {  // the workers held for the one process are free with it
    for (size_t i = 1; i < gang.ranks.size(); ++i) CS_RETURN_IF_ERROR(FreeWorker(gang.ranks[i], number, false));
    TrialRecord whole = std::move(gang.ended.begin()->second);
    whole.workers = FormatRanks(gang.ranks);
    gangs_.erase(number);
    return std::optional<TrialRecord>(std::move(whole));
  }
  TrialRecord whole = MergeGang(gang.ranks, gang.ended);
  gangs_.erase(number);
  return std::optional<TrialRecord>(std::move(whole));
}

Status Coordinator::Replace(const Promotion& promotion, TrialRecord* running) {
  TrialRecord ended = ledger_.TakePaused(promotion.number);
  promotion_stale_ = true;
  const std::int64_t number = next_number_;
  ended.state = TrialState::kPruned;
  ended.reason = promotion.reason + " (trial " + std::to_string(number) + ")";
  CS_RETURN_IF_ERROR(StageRow(ended));
  curves_[ended.number].state = TrialState::kPruned;
  ledger_.Settle(ended, 0);
  const auto& [parent_params, parent_generation] = lineage_[promotion.parent];
  running->number = number;
  running->params = sampler_->Derive(number, parent_params).value_or(parent_params);
  running->parent = promotion.parent;
  running->generation = parent_generation + 1;
  // Its steps go on from its parent's: as far as its training goes, it has done those.
  running->checkpoint_step = running->resumed_from = running->last_step = promotion.parent_step;
  lineage_[number] = {running->params, running->generation};
  curves_[number].checkpoint_step = promotion.parent_step;
  pins_[promotion.parent][number] = promotion.parent_step;  // until the new trial has linked it
  pinned_parent_[number] = promotion.parent;
  progress_->Message("trial " + std::to_string(ended.number) + " " + promotion.reason + ": trial " +
                     std::to_string(number) + " (generation " + std::to_string(running->generation) + ")");
  return Status::Ok();
}

std::int64_t Coordinator::ReleaseBound(std::int64_t trial, std::int64_t before) const {
  const auto pinned = pins_.find(trial);
  if (pinned == pins_.end()) return before;
  for (const auto& [child, step] : pinned->second) before = std::min(before, step);
  return before;
}

void Coordinator::Unpin(std::int64_t child) {
  const auto it = pinned_parent_.find(child);
  if (it == pinned_parent_.end()) return;
  const auto parent = pins_.find(it->second);
  if (parent != pins_.end()) {
    parent->second.erase(child);
    if (parent->second.empty()) pins_.erase(parent);
  }
  pinned_parent_.erase(it);
}

TrialRecord Coordinator::ContinuationOf(const TrialRecord& interrupted, int attempt) {
  TrialRecord next;
  next.number = interrupted.number;
  next.params = interrupted.params;
  next.attempt = attempt;
  next.retry_of = interrupted.retry_of;
  next.enqueued = interrupted.enqueued;
  next.sampler_ms = interrupted.sampler_ms;
  next.attrs_json = interrupted.attrs_json;
  next.checkpoint_step = next.resumed_from = interrupted.checkpoint_step;
  next.parent = interrupted.parent;  // a child of population-based training links its start again if need be
  next.generation = interrupted.generation;
  next.last_step = interrupted.last_step;
  next.distributions = interrupted.distributions;  // what it asked for: recorded under its number already
  const TrialCurve& curve = curves_[interrupted.number];
  if (!curve.values.empty()) next.last_step = std::max(next.last_step, curve.values.rbegin()->first);
  return next;
}

ProgressState Coordinator::State() const {
  ProgressState s;
  s.done = ledger_.finished();
  s.done_before = finished_before_;
  // Sharing n_trials: what is left of the sweep's for this shard, as far as it knows.
  s.total = std::max(shared_budget_ ? target_ - shared_taken_ : target_, ledger_.finished());
  s.running = OwnRunning() - queued_ - static_cast<std::int64_t>(waiting_.size());
  s.failed = ledger_.finished() - ledger_.complete() - ledger_.pruned();
  if (ledger_.best()) {
    s.best_value = ledger_.best()->value;
    s.best_number = ledger_.best()->number;
  }
  if (config_.study.multi_objective()) s.front_size = static_cast<std::int64_t>(ledger_.pareto_front().size());
  s.elapsed_s = clock_->Now() - started_;
  return s;
}

Status Coordinator::RecordResult(int source, TrialRecord record) {
  CS_RETURN_IF_ERROR(FreeWorker(source, record.number, true));
  if (gangs_.count(record.number)) {
    Result<std::optional<TrialRecord>> whole = GangMemberEnded(source, std::move(record));
    if (!whole.ok()) return whole.status();
    if (!whole->has_value()) return Status::Ok();  // its other processes have yet to end
    record = std::move(**whole);
  }
  const auto it = running_.find(record.number);
  // The worker knows the declared parameters; what the trial defined as it ran was recorded here.
  record.distributions = it->second.distributions;
  if (!record.distributions.empty()) defined_[record.number] = record.distributions;  // for its re-runs
  for (const auto& [name, distribution] : record.distributions) {
    if (const auto value = it->second.params.find(name); value != it->second.params.end()) {
      record.params[name] = value->second;
    }
  }
  NoteDuration(record);
  history_.running.erase(record.number);
  record.enqueued = it->second.enqueued;
  record.sampler_ms = it->second.sampler_ms;
  record.retry_of = it->second.retry_of;
  record.attempt = it->second.attempt;
  // A continued trial: where this attempt began, and what its earlier attempts reached.
  record.resumed_from = it->second.resumed_from;
  record.parent = it->second.parent;
  record.generation = it->second.generation;
  record.checkpoint_step = std::max(record.checkpoint_step, it->second.checkpoint_step);
  record.last_step = std::max(record.last_step, it->second.last_step);
  record.violation = config_.study.Violation(record);
  // Told to pause at a rung (pruner.resume): it rests there, unless it has no checkpoint to go on from.
  if (pausing_.erase(record.number) > 0 && record.state == TrialState::kPruned) {
    if (record.checkpoint_step >= 0) {
      record.state = TrialState::kPaused;
    } else {
      record.reason +=
          "; it declared no checkpoint to go on from, so it ends here (pruner.resume needs trials "
          "that checkpoint: docs/checkpoints.md)";
    }
  }
  running_.erase(it);
  CS_RETURN_IF_ERROR(StageRow(record));  // durable (at CommitTurn) before anything depending on it leaves
  // checkpoint_keep: none: a trial that ended for good needs none of its checkpoints once that is durable.
  if (config_.trial.checkpoint_keep == CheckpointKeep::kNone && record.checkpoint_step >= 0 &&
      record.state != TrialState::kInterrupted && record.state != TrialState::kPaused) {
    pending_releases_.push_back(
        {record.worker > 0 ? record.worker : source,
         ReleaseMsg{record.number, ReleaseBound(record.number, std::numeric_limits<std::int64_t>::max())}});
  }
  curves_[record.number].state = record.state;
  promotion_stale_ = true;
  prune_sent_.erase(record.number);
  const auto before = failures_.find(record.number);  // a rerun's chain so far
  const int failures_before = before == failures_.end() ? 0 : before->second;
  const TrialLedger::Settled settled = ledger_.Settle(record, failures_before);
  if (siblings_) sweep_ledger_.Settle(record, failures_before, false);
  if (before != failures_.end()) failures_.erase(before);
  CS_RETURN_IF_ERROR(WriteFrontChanges());
  CS_RETURN_IF_ERROR(CheckStopWhen());
  PendingProgress shown{record, State(), ""};
  if (settled.fate == TrialLedger::Fate::kRetry) {
    shown.message = "trial " + std::to_string(record.number) + " ended " + TrialStateName(record.state) +
                    ": it will run again (retry " + std::to_string(settled.failures) + " of " +
                    std::to_string(config_.trial.retries) + ")";
  }
  pending_progress_.push_back(std::move(shown));
  return Status::Ok();
}

Status Coordinator::RecordReport(int source, const IntermediateValue& v) {
  TrialCurve& curve = curves_[v.trial];
  const auto run = running_.find(v.trial);
  if (run != running_.end()) {
    // A trial that went on from its checkpoint repeats the steps its last attempt ran past that
    // checkpoint: the study keeps the value it has (computed from the same checkpoint), one per step.
    if (run->second.resumed_from >= 0 && curve.values.count(v.step)) return Status::Ok();
    run->second.last_step = std::max(run->second.last_step, v.step);
  }
  CS_RETURN_IF_ERROR(store_->AppendIntermediate(v));
  curve.values[v.step] = v.value;
  promotion_stale_ = true;  // a value at a rung may let a paused trial go on
  if (!pruner_ || prune_sent_.count(v.trial) || curve.state != TrialState::kRunning) return Status::Ok();
  std::optional<std::string> reason = pruner_->ShouldPrune(v.trial, v.step, curves_);
  if (!reason) return Status::Ok();
  prune_sent_.insert(v.trial);
  if (pruner_->Pauses()) pausing_.insert(v.trial);  // it stops as if pruned; RecordResult makes it PAUSED
  return SendToTrial(v.trial, source, PruneMsg{v.trial, *reason});
}

ParamSet Coordinator::Declared(const ParamSet& params) const {
  ParamSet declared;
  for (const auto& [name, value] : params) {
    if (config_.space.Find(name)) declared.emplace(name, value);
  }
  return declared;
}

Status Coordinator::HandleSuggest(int source, const SuggestMsg& ask) {
  // Trials ask in bursts (each suggest call of an objective, one after the other): look for the
  // next request often for a while, rather than after an idle back-off of up to 10 ms.
  responsive_until_ = clock_->Now() + kResponsiveSeconds;
  transport_->SetResponsive(true);
  const auto received = std::chrono::steady_clock::now();  // a measurement (RunSummary::suggest_ms)
  SuggestReplyMsg reply{ask.number, ask.name, "", ""};
  const auto run = running_.find(ask.number);
  Result<ParamSpec> spec = DistributionFromJson(ask.name, ask.distribution);
  if (run == running_.end()) {
    reply.error = "trial " + std::to_string(ask.number) + " is not running";  // ended meanwhile: nobody waits
  } else if (!spec.ok()) {
    reply.error = "suggest '" + ask.name + "': " + spec.status().message();  // the worker checked it: not ours
  } else if (config_.space.Find(ask.name)) {
    reply.error = "'" + ask.name + "' is declared under space:, so its worker answers it";
  }
  if (!reply.error.empty()) {
    pending_replies_.push_back({source, std::move(reply), received});
    return Status::Ok();
  }
  TrialRecord& trial = run->second;
  const std::string distribution = DistributionJson(*spec);
  // Asked before under this number (by another process of a gang, or by this attempt's
  // predecessor): the value it has, if the distribution is the same.
  if (const auto known = trial.distributions.find(ask.name); known != trial.distributions.end()) {
    const Result<ParamSpec> before = DistributionFromJson(ask.name, known->second);
    if (before.ok() && SameDistribution(*before, *spec)) {
      reply.value_json = ToJson(trial.params.at(ask.name)).dump();
    } else {
      reply.error = "the trial asked for '" + ask.name + "' as " + DescribeDistribution(*spec) + ", and trial " +
                    std::to_string(ask.number) + " had it as " +
                    (before.ok() ? DescribeDistribution(*before) : known->second) +
                    ": one name, one distribution per trial";
    }
    pending_replies_.push_back({source, std::move(reply), received});
    return Status::Ok();
  }
  std::optional<ParamValue> value;
  // A re-run of an earlier trial (a retry, an interrupted trial run again) repeats its parameters:
  // the value that trial was given, when it asked for the same distribution.
  if (const auto inherited = trial.params.find(ask.name); inherited != trial.params.end() && trial.retry_of >= 0) {
    const auto of = defined_.find(trial.retry_of);
    if (of != defined_.end()) {
      const auto had = of->second.find(ask.name);
      const Result<ParamSpec> before = had == of->second.end() ? Result<ParamSpec>(Status::InvalidInput(""))
                                                               : DistributionFromJson(ask.name, had->second);
      if (before.ok() && SameDistribution(*before, *spec) && SearchSpace::Normalize(*spec, inherited->second).ok()) {
        value = inherited->second;
      }
    }
  }
  double sampled_ms = 0;
  if (!value) {
    const double start = clock_->Now();
    Result<ParamValue> drawn = sampler_->SuggestTrialDefined(ask.number, *spec, trial.params, history_);
    sampled_ms = (clock_->Now() - start) * 1e3;
    if (!drawn.ok()) {
      reply.error = drawn.status().message();
      pending_replies_.push_back({source, std::move(reply), received});
      return Status::Ok();
    }
    value = std::move(*drawn);
  }
  // Recorded in /params with this turn's commit; the answer waits for it.
  trial.params[ask.name] = *value;
  trial.distributions[ask.name] = distribution;
  trial.sampler_ms += sampled_ms;
  history_.running[ask.number][ask.name] = *value;
  history_.trial_defined[ask.name] = distribution;
  CS_RETURN_IF_ERROR(store_->AppendTrialParam({ask.number, ask.name, *value, distribution}));
  reply.value_json = ToJson(*value).dump();
  pending_replies_.push_back({source, std::move(reply), received});
  return Status::Ok();
}

Status Coordinator::RecordCheckpoint(int source, const CheckpointMsg& checkpoint) {
  const auto run = running_.find(checkpoint.number);
  if (run == running_.end() || checkpoint.step < run->second.checkpoint_step) return Status::Ok();
  run->second.checkpoint_step = checkpoint.step;
  curves_[checkpoint.number].checkpoint_step = checkpoint.step;
  promotion_stale_ = true;  // a member with a checkpoint can be a parent
  // Older checkpoints go only once the row that names this one is durable (CommitTurn).
  if (config_.trial.checkpoint_keep != CheckpointKeep::kAll) {
    pending_releases_.push_back(
        {source, ReleaseMsg{checkpoint.number, ReleaseBound(checkpoint.number, checkpoint.step)}});
  }
  return store_->PutTrial(run->second);  // the same RUNNING row, rewritten: durable with this turn
}

std::string Coordinator::EndedShort() const {
  const std::int64_t n_trials = config_.study.n_trials;
  const std::int64_t share = ShardSize(config_.study.shard, n_trials);  // what this run was to finish
  const std::int64_t done = ledger_.finished();
  if (shared_budget_ && done + shared_taken_ >= target_) return "";  // the sweep's trials are all taken
  if (done >= share) return "";
  const std::string at = "at " + std::to_string(done) + " of " + std::to_string(share) + " trials";
  if (config_.sampler.kind == "pbt") {
    // New trials start only to replace members; one that never pauses at a check is never replaced.
    const SamplerOptions& pbt = config_.sampler;
    std::int64_t through = 0, replaced = 0;
    for (const TrialRecord& r : history_.finished) {
      if (r.state == TrialState::kComplete && r.attempt == 1 && r.last_step >= pbt.interval) ++through;
      if (r.state == TrialState::kPruned && r.reason.find("replaced") != std::string::npos) ++replaced;
    }
    char bottom[32];
    std::snprintf(bottom, sizeof bottom, "%g%%", pbt.quantile * 100);
    std::string why = "population-based training ended " + at + ": every member of its population of " +
                      std::to_string(pbt.population) + " ended, and a new trial starts only to replace a member " +
                      "(a member pauses at a check every " + std::to_string(pbt.interval) + " steps, and those " +
                      "in the bottom " + bottom + " are replaced); " + std::to_string(replaced) + " were replaced";
    if (through > 0) {
      why += ", and " + std::to_string(through) + " ran past a check to the end without pausing there: does the " +
             "trial check should_prune() after each report, and exit when it says so? (docs/samplers.md)";
    }
    return why;
  }
  if (target_ < share) {  // the sampler holds fewer configurations than n_trials
    return "sampler " + config_.sampler.kind + " has " + std::to_string(target_) +
           " configurations, fewer than study.n_trials (" + std::to_string(n_trials) + "): each ran once";
  }
  if (sampler_exhausted_) {
    return "sampler " + config_.sampler.kind + " had no configuration left to propose " + at;
  }
  return "";
}

std::string Coordinator::Describe(const Envelope& envelope) const {
  const std::string from = " from rank " + std::to_string(envelope.source);
  if (const auto* report = std::get_if<StepMsg>(&envelope.message)) {
    const std::string& pruner = config_.sampler.kind == "pbt" ? config_.sampler.kind : config_.pruner.kind;
    return "handling a report" + from + " (trial " + std::to_string(report->value.trial) + " at step " +
           std::to_string(report->value.step) + (pruner == "none" ? "" : ", pruner " + pruner) + ")";
  }
  if (const auto* checkpoint = std::get_if<CheckpointMsg>(&envelope.message)) {
    return "handling a checkpoint" + from + " (trial " + std::to_string(checkpoint->number) + " at step " +
           std::to_string(checkpoint->step) + ")";
  }
  if (const auto* result = std::get_if<ResultMsg>(&envelope.message)) {
    return "recording the result of trial " + std::to_string(result->record.number) + from + " (" +
           TrialStateName(result->record.state) + ")";
  }
  return std::string("handling a '") + TagName(TagOf(envelope.message)) + "' message" + from;
}

Status Coordinator::Handle(const Envelope& envelope) {
  if (const auto* report = std::get_if<StepMsg>(&envelope.message)) {
    Unpin(report->value.trial);  // a trial that reports runs: it has its start linked
    return RecordReport(envelope.source, report->value);
  }
  if (const auto* checkpoint = std::get_if<CheckpointMsg>(&envelope.message)) {
    Unpin(checkpoint->number);
    return RecordCheckpoint(envelope.source, *checkpoint);
  }
  if (const auto* ask = std::get_if<SuggestMsg>(&envelope.message)) return HandleSuggest(envelope.source, *ask);
  if (const auto* result = std::get_if<ResultMsg>(&envelope.message)) {
    Unpin(result->record.number);
    CS_RETURN_IF_ERROR(RecordResult(envelope.source, result->record));
    if (result->worker_fault.empty() || !summary_.worker_fault.empty()) return Status::Ok();
    // A worker that cannot start trials (its disk, its process table) would turn every trial it
    // gets into the same failure: stop the sweep instead, letting running trials finish.
    const WorkerSlot& slot = workers_[static_cast<size_t>(envelope.source)];
    summary_.worker_fault = "worker rank " + std::to_string(envelope.source) + " on " + slot.host +
                            " cannot start trials: " + result->worker_fault;
    progress_->Message("error: " + summary_.worker_fault + "; stopping the sweep (running trials get " +
                       FormatDuration(config_.trial.stop_grace) + " to finish)");
    if (stopping_) return Status::Ok();
    stopping_ = true;
    return StopAll(StopMsg{"worker rank " + std::to_string(envelope.source) + " cannot start trials",
                           config_.trial.stop_grace.count(), false});
  }
  return Status::RuntimeError(std::string("unexpected '") + TagName(TagOf(envelope.message)) + "' message from rank " +
                              std::to_string(envelope.source));
}

Status Coordinator::WriteFrontChanges() {
  // Rows rewritten, not new ones: they go out with this turn's commit, uncounted.
  for (const TrialRecord& changed : ledger_.TakeFrontChanges()) CS_RETURN_IF_ERROR(store_->PutTrial(changed));
  return Status::Ok();
}

Status Coordinator::StageRow(const TrialRecord& record) {
  ++uncommitted_rows_;
  return store_->PutTrial(record);
}

Status Coordinator::CommitTurn() {
  if (uncommitted_rows_ > 0) {
    const auto start = std::chrono::steady_clock::now();  // a measurement, not a scheduling decision
    CS_RETURN_IF_ERROR(store_->Flush());
    summary_.commit_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    summary_.committed_rows += uncommitted_rows_;
    uncommitted_rows_ = 0;
  } else {
    CS_RETURN_IF_ERROR(store_->Flush());  // intermediate values alone
  }
  // The rows are durable: hand out the next trials first (workers wait for them; printing can
  // wait), then say what finished. Taken out of the member before sending, so a failed send is
  // never retried with a moved-from message (a trial that was not sent is RUNNING in the file and
  // runs again on resume); the durable results are printed even then.
  // Trials waiting for a parameter first: their values are durable now.
  std::vector<PendingReply> replies = std::move(pending_replies_);
  pending_replies_.clear();
  Status sent;
  for (const PendingReply& r : replies) {
    sent = transport_->Send(r.rank, r.reply)
               .WithContext("cannot answer rank " + std::to_string(r.rank) + "'s request for a parameter");
    if (!sent.ok()) break;
    summary_.suggest_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - r.received).count());
  }
  std::vector<PendingAssign> assigns = std::move(pending_assigns_);
  pending_assigns_.clear();
  for (PendingAssign& a : assigns) {
    if (!sent.ok()) break;
    sent = transport_->Send(a.rank, a.message).WithContext("cannot hand a trial to rank " + std::to_string(a.rank));
    if (!sent.ok()) break;
    ++workers_[static_cast<size_t>(a.rank)].handed_out;
  }
  std::vector<std::pair<int, ReleaseMsg>> releases = std::move(pending_releases_);
  pending_releases_.clear();
  for (const auto& [rank, release] : releases) {
    if (!sent.ok()) break;
    sent = transport_->Send(rank, release)
               .WithContext("cannot tell rank " + std::to_string(rank) + " which checkpoints may go");
  }
  for (const PendingProgress& p : pending_progress_) {
    progress_->TrialFinished(p.record, p.state);
    if (!p.message.empty()) progress_->Message(p.message);
  }
  pending_progress_.clear();
  return sent;
}

Status Coordinator::StopAll(const StopMsg& stop) {
  Status first_failure;
  for (int rank = 1; rank < transport_->size(); ++rank) {
    // Every rank gets its Stop even when one cannot be reached; the first failure is returned.
    const Status sent = transport_->Send(rank, stop);
    if (!sent.ok() && first_failure.ok())
      first_failure = sent.WithContext("cannot send Stop to rank " + std::to_string(rank));
  }
  return first_failure;
}

void Coordinator::WindDown() {
  std::map<int, size_t> owing;  // ranks with trials out, and how many results are still to come
  for (int rank = 1; rank < transport_->size(); ++rank) {
    const WorkerSlot& slot = workers_[static_cast<size_t>(rank)];
    const bool out = slot.handed_out > 0;
    if (out) owing[rank] = slot.handed_out;
    if (!out && stopping_) continue;  // it already has its Stop
    // A Stop that cannot be sent means the transport is gone: nothing more can be done in order.
    if (!transport_->Send(rank, StopMsg{"the coordinator failed", 0, out}).ok()) return;
  }
  if (!owing.empty()) {
    size_t queued = 0;  // each worker runs one of its trials; the others wait on it, never to start
    for (const auto& [rank, count] : owing) queued += count - 1;
    progress_->Message("stopping: killing " + std::to_string(owing.size()) +
                       " running trials and waiting for their workers (they run again on resume" +
                       (queued > 0 ? ", with the " + std::to_string(queued) + " queued behind them" : std::string()) +
                       ")");
  }
  // Their results are received and dropped (the store has failed; their rows stay RUNNING and
  // become INTERRUPTED on resume), so no worker is left blocked sending one.
  const double deadline =
      clock_->Now() + static_cast<double>((config_.trial.kill_grace + kWindDownSlack).count()) / 1e3;
  while (!owing.empty()) {
    const double left_s = deadline - clock_->Now();
    if (left_s <= 0) return;
    const Millis left(static_cast<Millis::rep>(std::ceil(left_s * 1e3)));
    Result<std::optional<Envelope>> got = transport_->Receive(std::min(timing_.tick, left));
    if (!got.ok()) return;
    if (!got->has_value() || !std::holds_alternative<ResultMsg>((*got)->message)) continue;
    const auto it = owing.find((*got)->source);
    if (it != owing.end() && --it->second == 0) owing.erase(it);
  }
  workers_settled_ = true;
}

void Coordinator::Resume(std::vector<TrialRecord> trials, const std::vector<IntermediateValue>& intermediate) {
  std::sort(trials.begin(), trials.end(),
            [](const TrialRecord& a, const TrialRecord& b) { return a.number < b.number; });
  for (const IntermediateValue& v : intermediate) curves_[v.trial].values[v.step] = v.value;
  for (const TrialRecord& r : trials) {
    next_number_ = std::max(next_number_, r.number + 1);
    if (r.retry_of < 0 && r.parent < 0) ++fresh_;  // a child of population-based training was derived
    curves_[r.number].checkpoint_step = r.checkpoint_step;
    if (config_.sampler.kind == "pbt") lineage_[r.number] = {r.params, r.generation};
    for (const auto& [name, distribution] : r.distributions) history_.trial_defined[name] = distribution;
    if (!r.distributions.empty()) defined_[r.number] = r.distributions;
  }
  prior_ = std::move(trials);
}

// Applies what Resume() read, now that the store is open: RUNNING rows become INTERRUPTED, and
// every chain whose last trial was interrupted or is due a retry runs again.
Status Coordinator::RecordPrior() {
  if (prior_.empty()) return Status::Ok();
  std::map<std::int64_t, const TrialRecord*> by_number;
  std::set<std::int64_t> rerun_done;
  for (TrialRecord& r : prior_) {
    // The constraints may have changed with --set: each COMPLETE row is judged by today's.
    if (const double violation = config_.study.Violation(r);
        r.state == TrialState::kComplete &&
        !(violation == r.violation || (std::isnan(violation) && std::isnan(r.violation)))) {
      r.violation = violation;
      CS_RETURN_IF_ERROR(StageRow(r));
    }
    if (r.state == TrialState::kRunning) {
      r.state = TrialState::kInterrupted;
      r.end_time = r.start_time;
      r.reason = "interrupted: the coordinator stopped while it ran (killed, or the job ended); run again";
      CS_RETURN_IF_ERROR(StageRow(r));
    }
    if (r.state == TrialState::kPaused && !(pruner_ && pruner_->Pauses())) {  // the config no longer resumes rungs
      r.state = TrialState::kPruned;
      r.reason = "pruned: " + r.reason + "; the study resumed without pruner.resume";
      CS_RETURN_IF_ERROR(StageRow(r));
    }
    by_number[r.number] = &r;
    if (r.retry_of >= 0) rerun_done.insert(r.retry_of);
  }
  std::int64_t interrupted = 0, continuing = 0, retries = 0, paused = 0;
  for (const TrialRecord& r : prior_) {
    curves_[r.number].state = r.state;
    int failures_before = 0;  // retry_on failures along its chain, before it
    for (auto up = by_number.find(r.retry_of); up != by_number.end(); up = by_number.find(up->second->retry_of)) {
      failures_before += config_.trial.retry_on.count(up->second->state) ? 1 : 0;
    }
    const bool next_attempt_exists = rerun_done.count(r.number) > 0;
    const TrialLedger::Settled settled = ledger_.Settle(r, failures_before, !next_attempt_exists);
    if (siblings_) sweep_ledger_.Settle(r, failures_before, false);
    if (!next_attempt_exists) {
      interrupted += settled.fate == TrialLedger::Fate::kInterrupted;
      continuing += settled.fate == TrialLedger::Fate::kInterrupted && r.checkpoint_step >= 0;
      retries += settled.fate == TrialLedger::Fate::kRetry;
      paused += settled.fate == TrialLedger::Fate::kPaused;
    }
  }
  CS_RETURN_IF_ERROR(WriteFrontChanges());
  finished_before_ = ledger_.finished();
  progress_->Message("resuming: " + std::to_string(ledger_.finished()) + " trials finished, " +
                     std::to_string(interrupted) + " interrupted" +
                     (continuing > 0 ? " (" + std::to_string(continuing) + " go on from their checkpoints)" : "") +
                     " and " + std::to_string(retries) + " retries to run" +
                     (paused > 0 ? ", " + std::to_string(paused) + " paused" : "") + ", numbering continues at " +
                     std::to_string(next_number_));
  prior_.clear();
  // What the last run said about stopping early no longer holds unless it holds again now.
  CS_RETURN_IF_ERROR(store_->RecordStopReason(""));
  return CheckStopWhen();
}

Status Coordinator::CheckStopRequest() {
  if (!stop_poll_) return Status::Ok();
  const StopRequest request = stop_poll_();
  if (request.level <= stop_level_) return Status::Ok();
  stop_level_ = request.level;
  stopping_ = summary_.interrupted = true;
  if (request.level == 1) {
    progress_->Message(request.reason + ": no new trials; running ones get " +
                       FormatDuration(config_.trial.stop_grace) +
                       " to finish, then they stop and are recorded INTERRUPTED (signal again to stop at once)");
    return StopAll(StopMsg{request.reason, config_.trial.stop_grace.count(), false});
  } else {
    progress_->Message(request.reason +
                       " again: stopping now; running trials stay RUNNING in the study "
                       "file and run again on resume");
    return StopAll(StopMsg{request.reason, 0, true});
  }
}

Result<RunSummary> Coordinator::Run(const StoreOpener& open_store, const std::string& trials_root) {
  Status status = SetUpWorkers(trials_root);
  if (status.ok()) {
    Result<std::unique_ptr<StudyStore>> store = open_store();
    status = store.status();
    if (store.ok()) store_ = std::move(*store);
    if (store_) store_->DeferFlush(true);  // group commit: CommitTurn() flushes once per turn
  }
  if (status.ok()) status = RecordPrior();
  if (status.ok() && warm_trials_ > 0) {
    progress_->Message("warm start: the sampler starts from " + std::to_string(warm_trials_) +
                       " trials of earlier studies (history only: not trials of this study)");
  }
  if (status.ok() && siblings_) status = ReadSiblings();  // a joiner must know what is taken before it draws
  if (!status.ok()) {
    // The setup failure is what the user needs to see; a Stop that could not be sent adds nothing.
    CS_IGNORE_ERROR(StopAll(StopMsg{"setup failed"}));
    return status;
  }
  started_ = clock_->Now();
  next_share_ = started_ + share_interval_;
  LoopWatchdog watchdog([this](const std::string& line) { progress_->Message(line); }, timing_.watchdog);
  const std::string sampling = "choosing trial parameters (sampler " + config_.sampler.kind + ") and handing them out";
  while (status.ok() && stop_level_ < 2) {
    watchdog.Busy("checking for a stop request");
    status = CheckStopRequest();
    if (!status.ok()) break;
    if (!stopping_ && BudgetReached()) {
      stopping_ = summary_.budget_reached = true;
      progress_->Message("time budget of " + FormatDuration(*config_.study.time_budget) +
                         " reached: stopping running trials");
      status = StopAll(StopMsg{"the study's time budget was reached"});
      if (!status.ok()) break;
    }
    if (siblings_ && clock_->Now() >= next_share_) {
      watchdog.Busy("reading the sweep's other study files (study.share_every)");
      status = ReadSiblings();
      next_share_ = clock_->Now() + share_interval_;
      if (!status.ok()) break;
    }
    watchdog.Busy(sampling);
    status = Dispatch();
    // Nothing runs and nothing will: trials paused at rungs can no longer be promoted.
    if (status.ok() && OwnRunning() == 0 && ledger_.paused_count() > 0 && !WorkLeft()) {
      watchdog.Busy("ending the trials paused at rungs");
      status = SettlePaused();
    }
    watchdog.Busy("writing this turn's rows to the study file");
    if (status.ok()) status = CommitTurn();  // this turn's results and RUNNING rows, in one flush
    if (!status.ok() || (OwnRunning() == 0 && !MoreToLaunch())) break;
    // Awake at the budget's end, not up to a tick after it: trials stop when the budget says.
    const Millis until_budget = stopping_ ? Millis::max() : UntilBudget();
    const bool budget_next = until_budget < timing_.tick;
    if (responsive_until_ >= 0 && clock_->Now() > responsive_until_) {
      transport_->SetResponsive(false);  // no trial has asked for a parameter in a while
      responsive_until_ = -1;
    }
    watchdog.Idle();  // waiting for a message is no slow turn
    Result<std::optional<Envelope>> got = transport_->Receive(budget_next ? until_budget : timing_.tick);
    if (!got.ok()) {
      status = got.status();
    } else if (got->has_value()) {
      watchdog.Busy(Describe(**got));
      status = Handle(**got);
      // Whatever else has arrived joins the same group commit (bounded, so the turn stays short).
      for (int n = 1; status.ok() && n < kMaxMessagesPerTurn; ++n) {
        got = transport_->Receive(Millis(0));
        if (!got.ok()) {
          status = got.status();
        } else if (got->has_value()) {
          watchdog.Busy(Describe(**got));
          status = Handle(**got);
        } else {
          break;
        }
      }
    } else if (!budget_next) {
      progress_->Tick(State());
    }
  }
  watchdog.Idle();  // what follows waits for workers, with limits and lines of its own
  // A sweep that ends short of its trials with no stop asked for says why (issue 36).
  if (status.ok() && !stopping_ && stop_when_reason_.empty()) {
    if (const std::string why = EndedShort(); !why.empty()) {
      summary_.stopped_early = why;
      progress_->Message("ended before study.n_trials: " + why);
      if (store_) status = store_->RecordStopReason(why);
    }
  }
  if (store_) {  // what was written is kept, even when the run failed
    const Status committed = CommitTurn();
    if (status.ok()) status = committed;
  }
  if (!status.ok()) {
    workers_settled_ = false;
    WindDown();
    return status;
  }
  if (!stopping_) status = StopAll(StopMsg{"the study is complete"});
  if (!status.ok()) return status;
  // A stop that came when nothing was left to run (the last result was in) ended nothing early:
  // the study is complete, and a batch script must not requeue it.
  if (summary_.interrupted && !WorkLeft()) summary_.interrupted = false;
  summary_.finished = ledger_.finished();
  summary_.complete = ledger_.complete();
  summary_.pruned = ledger_.pruned();
  summary_.best = ledger_.best();
  summary_.pareto_front = ledger_.pareto_front();
  if (siblings_) summary_.sweep_trials = ledger_.finished() + shared_taken_;
  progress_->Finish(State());
  return summary_;
}

}  // namespace cleansweep
