#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "study/study_file.hpp"
#include "util/json_limits.hpp"
#include "util/quantile.hpp"
#include "util/utf8.hpp"

namespace cleansweep {
namespace {

void PrintTop(const StudyData& study, int top) {
  std::vector<const TrialRecord*> ranked;
  for (const TrialRecord& r : study.trials) {
    if (r.state == TrialState::kComplete && r.value && !r.infeasible()) ranked.push_back(&r);
  }
  const bool maximize = study.config.study.direction == Direction::kMaximize;
  std::stable_sort(ranked.begin(), ranked.end(), [&](const TrialRecord* a, const TrialRecord* b) {
    return maximize ? *a->value > *b->value : *a->value < *b->value;
  });
  if (ranked.size() > static_cast<size_t>(top)) ranked.resize(static_cast<size_t>(top));
  if (ranked.empty()) return;
  std::vector<const ParamSpec*> columns;
  for (const ParamSpec& spec : study.config.space.params()) {
    if (spec.kind != ParamKind::kFixed) columns.push_back(&spec);
  }
  std::printf("\ntop %zu:\n%6s  %12s", ranked.size(), "trial", study.config.study.metric.c_str());
  for (const ParamSpec* spec : columns) std::printf("  %12s", spec->name.c_str());
  std::printf("  %9s\n", "duration");
  for (const TrialRecord* r : ranked) {
    std::printf("%6lld  %12.6g", static_cast<long long>(r->number), *r->value);
    for (const ParamSpec* spec : columns) {
      const auto it = r->params.find(spec->name);
      std::printf("  %12s", it == r->params.end() ? "-" : Utf8Prefix(FormatValue(it->second), 12).c_str());
    }
    std::printf("  %8.1fs\n", r->duration());
  }
}

// A multi-metric study's Pareto front as the file marks it (the pareto column), best first by the
// first metric.
void PrintFront(const StudyData& study) {
  const StudyOptions& options = study.config.study;
  std::vector<const TrialRecord*> front;
  int complete = 0;
  for (const TrialRecord& r : study.trials) {
    if (r.state != TrialState::kComplete || r.values.size() != options.metrics.size()) continue;
    ++complete;
    if (r.pareto) front.push_back(&r);
  }
  if (front.empty()) {
    std::printf("no trial completed yet\n");
    return;
  }
  const bool maximize = options.metrics.front().direction == Direction::kMaximize;
  std::stable_sort(front.begin(), front.end(), [&](const TrialRecord* a, const TrialRecord* b) {
    return maximize ? a->values[0] > b->values[0] : a->values[0] < b->values[0];
  });
  std::vector<const ParamSpec*> columns;
  for (const ParamSpec& spec : study.config.space.params()) {
    if (spec.kind != ParamKind::kFixed) columns.push_back(&spec);
  }
  std::printf(
      "\nPareto front: %zu of %d completed trials (no other is at least as good in every metric and "
      "better in one)\n%6s",
      front.size(), complete, "trial");
  for (const Metric& m : options.metrics) std::printf("  %12s", Utf8Prefix(m.name, 12).c_str());
  for (const ParamSpec* spec : columns) std::printf("  %12s", Utf8Prefix(spec->name, 12).c_str());
  std::printf("  %9s\n", "duration");
  for (const TrialRecord* r : front) {
    std::printf("%6lld", static_cast<long long>(r->number));
    for (const double v : r->values) std::printf("  %12.6g", v);
    for (const ParamSpec* spec : columns) {
      const auto it = r->params.find(spec->name);
      std::printf("  %12s", it == r->params.end() ? "-" : Utf8Prefix(FormatValue(it->second), 12).c_str());
    }
    std::printf("  %8.1fs\n", r->duration());
  }
}

// The coordinator's cost of choosing parameters, per trial.
void PrintSamplerTime(const StudyData& study) {
  std::vector<double> ms;
  int enqueued = 0;
  for (const TrialRecord& r : study.trials) {
    ms.push_back(r.sampler_ms);
    enqueued += r.enqueued ? 1 : 0;
  }
  if (ms.empty()) return;
  std::sort(ms.begin(), ms.end());
  std::printf("sampler time per trial: median %.3f ms, max %.3f ms", ms[ms.size() / 2], ms.back());
  if (enqueued > 0) std::printf("; %d trials from enqueue", enqueued);
  std::printf("\n");
}

// How long workers sat without a trial between two (TrialRecord::idle_gap_ms).
void PrintIdleGaps(const StudyData& study) {
  std::vector<double> ms;
  for (const TrialRecord& r : study.trials) {
    if (const std::optional<double> gap = r.idle_gap_ms()) ms.push_back(*gap);
  }
  if (ms.empty()) return;
  std::sort(ms.begin(), ms.end());
  std::printf("idle gap between trials on a worker: median %.2f ms, p95 %.2f ms (%zu gaps)\n",
              NearestRankQuantile(ms, 0.5), NearestRankQuantile(ms, 0.95), ms.size());
}

// What the trials cost together (docs/study-format.md): the sums over the trials that know it.
// Population-based training: how far the lineage went, and where the best trial comes from.
void PrintAncestry(const StudyData& study, const TrialRecord& best) {
  std::map<std::int64_t, const TrialRecord*> by_number;
  std::int64_t children = 0, generations = 0;
  for (const TrialRecord& r : study.trials) {
    by_number[r.number] = &r;
    children += r.parent >= 0 ? 1 : 0;
    generations = std::max(generations, r.generation);
  }
  if (children == 0) return;
  std::map<std::int64_t, std::int64_t> started_at;  // where each trial's first attempt began
  for (const TrialRecord& a : study.attempts) {
    if (a.attempt == 1) started_at[a.number] = a.resumed_from;
  }
  for (const TrialRecord& r : study.trials) {
    if (r.attempt == 1) started_at[r.number] = r.resumed_from;
  }
  std::string chain = std::to_string(best.number);
  std::set<std::int64_t> seen = {best.number};
  for (const TrialRecord* r = &best; r->parent >= 0 && seen.insert(r->parent).second;) {
    const auto start = started_at.find(r->number);
    chain += " <- " + std::to_string(r->parent) +
             (start != started_at.end() ? " at step " + std::to_string(start->second) : std::string());
    const auto up = by_number.find(r->parent);
    if (up == by_number.end()) break;
    r = up->second;
  }
  std::printf(
      "  lineage        %s (population-based training: %lld trials started from another's checkpoint, up "
      "to generation %lld)\n",
      chain.c_str(), static_cast<long long>(children), static_cast<long long>(generations));
}

void PrintCost(const StudyData& study) {
  double cpu = 0, gpu = 0, energy = 0;
  int with_cpu = 0, with_energy = 0;
  std::vector<const TrialRecord*> all;  // every trial's latest attempt, and the earlier ones of continued trials
  for (const TrialRecord& r : study.trials) all.push_back(&r);
  for (const TrialRecord& a : study.attempts) all.push_back(&a);
  for (const TrialRecord* p : all) {
    const TrialRecord& r = *p;
    if (std::isfinite(r.cpu_seconds)) cpu += r.cpu_seconds, ++with_cpu;
    if (std::isfinite(r.gpu_seconds)) gpu += r.gpu_seconds;
    if (std::isfinite(r.energy_j)) energy += r.energy_j, ++with_energy;
  }
  if (with_cpu == 0) return;  // a file from before the cost columns, or nothing ran yet
  std::printf("cost of the trials: %.2f CPU-hours, %.2f GPU-hours", cpu / 3600, gpu / 3600);
  if (with_energy > 0) {
    const bool large = energy >= 3.6e6;  // from 1 kWh on, in kWh; below, in kJ
    std::printf(", %.2f %s on their GPUs (%d trials counted)", large ? energy / 3.6e6 : energy / 1e3,
                large ? "kWh" : "kJ", with_energy);
  }
  std::printf("\n");
}

// The failed trials' reasons, the latest few: what a user whose trials fail looks for first (the
// run's last line sends them here). Every reason is in `export`'s CSV.
void PrintFailures(const StudyData& study, const std::string& path) {
  constexpr size_t kShown = 5;
  std::vector<const TrialRecord*> failed;
  for (const TrialRecord& r : study.trials) {
    if (IsFailure(r.state)) failed.push_back(&r);
  }
  if (failed.empty()) return;
  std::stable_sort(failed.begin(), failed.end(),
                   [](const TrialRecord* a, const TrialRecord* b) { return a->end_time < b->end_time; });
  const size_t shown = std::min(kShown, failed.size());
  if (shown == failed.size()) {
    std::printf("failed trials:\n");
  } else {
    std::printf("failed trials, the latest %zu of %zu (every reason: cleansweep export %s):\n", shown, failed.size(),
                path.c_str());
  }
  // Their logs, where this machine sees them: beside the study file, or under study.trials_dir.
  StudyOptions where = study.config.study;
  where.storage = path;
  const std::string root = TrialsRoot(where);
  for (size_t i = failed.size() - shown; i < failed.size(); ++i) {
    const TrialRecord& r = *failed[i];
    std::printf("  trial %lld %s: %s", static_cast<long long>(r.number), TrialStateName(r.state),
                ForTerminal(r.reason.empty() ? "no reason recorded" : r.reason).c_str());
    const std::string log = root + "/" + std::to_string(r.number) + "/log.txt";
    std::error_code ec;
    if (std::filesystem::is_regular_file(log, ec)) std::printf(" (log: %s)", ForTerminal(log).c_str());
    std::printf("\n");
  }
}

}  // namespace

int ShowCommand(const ShowArgs& args) {
  Result<StudyData> study = ReadStudyFile(args.study);
  if (!study.ok()) return PrintError(study.status());
  const StudyConfig& c = study->config;
  std::printf("study %s (%s) in %s\n", c.study.name.c_str(), c.study.DescribeMetrics().c_str(), args.study.c_str());
  // The config says auto; the rule chose what the file records (the same rule, unless a version
  // with other thresholds wrote it: then the reason is not this one's to give).
  const std::string why = c.sampler.kind == study->sampler && !c.sampler.reason.empty() ? "; " + c.sampler.reason : "";
  std::printf("sampler %s (seed %lld%s), created %s by cleansweep %s\n", study->sampler.c_str(), study->seed,
              why.c_str(), study->created.c_str(), study->cleansweep_version.c_str());
  if (c.study.shard.part()) {
    std::printf("shard %s of a sweep of %lld trials (%s; join the shards with cleansweep merge)\n",
                c.study.shard.Name().c_str(), static_cast<long long>(c.study.n_trials),
                c.study.share_every.count() > 0 ? "shared with the sweep's other files" : "not shared");
  }
  if (!study->warm_start.empty()) {
    std::printf("warm start (history for the sampler, not trials of this study):\n");
    std::istringstream lines(study->warm_start);
    for (std::string line; std::getline(lines, line);) std::printf("  %s\n", ForTerminal(line).c_str());
  }
  if (!study->merged_from.empty()) {
    std::printf("merged from:\n");
    std::istringstream lines(study->merged_from);
    for (std::string line; std::getline(lines, line);) std::printf("  %s\n", ForTerminal(line).c_str());
  }
  // Resumes that changed the config, as the study file records them (config_history).
  const Result<nlohmann::json> history = ParseUntrustedJson(study->config_history);  // the file is input
  for (const nlohmann::json& entry : history.ok() && history->is_array() ? *history : nlohmann::json::array()) {
    if (!entry.is_object() || !entry.contains("changes") || !entry["changes"].is_array()) continue;
    std::string changes;
    for (const nlohmann::json& change : entry["changes"]) {
      changes += (changes.empty() ? "" : "; ") + (change.is_string() ? change.get<std::string>() : change.dump());
    }
    std::printf("config changed on resume %s: %s\n", ForTerminal(entry.value("at", std::string("?"))).c_str(),
                ForTerminal(changes).c_str());
  }
  std::map<std::string, int> counts;
  int finished = 0, running = 0, interrupted = 0, paused = 0;
  for (const TrialRecord& r : study->trials) {
    if (r.state == TrialState::kRunning) {
      ++running;
    } else if (r.state == TrialState::kInterrupted) {
      ++interrupted;
    } else if (r.state == TrialState::kPaused) {
      ++paused;
    } else {
      ++finished;
      ++counts[TrialStateName(r.state)];
    }
  }
  std::printf("%d of %lld trials finished:", finished,
              static_cast<long long>(ShardSize(c.study.shard, c.study.n_trials)));
  for (const auto& [state, n] : counts) std::printf(" %s %d", state.c_str(), n);
  const auto infeasible =
      std::count_if(study->trials.begin(), study->trials.end(), [](const TrialRecord& r) { return r.infeasible(); });
  if (infeasible > 0) std::printf(" (%lld COMPLETE outside study.constraints)", static_cast<long long>(infeasible));
  std::printf("\n");
  // RUNNING rows are live while a coordinator holds the study, or were cut off by a crash.
  if (running > 0) std::printf("running: %d (or cut off, if no coordinator is running it)\n", running);
  if (interrupted > 0) {
    const std::set<std::int64_t> go_on = TrialsToContinue(study->trials);
    const auto from_checkpoint = std::count_if(study->trials.begin(), study->trials.end(), [&](const TrialRecord& r) {
      return r.state == TrialState::kInterrupted && r.checkpoint_step >= 0 && go_on.count(r.number);
    });
    std::printf("interrupted: %d (on resume, %lld go on from their checkpoints; the others run again as new trials)\n",
                interrupted, static_cast<long long>(from_checkpoint));
  }
  if (paused > 0) {
    std::printf("paused: %d (at a rung of the pruner, each waiting for a promotion to go on from its checkpoint)\n",
                paused);
  }
  if (!study->attempts.empty()) {
    std::set<std::int64_t> interrupted_then, paused_then;
    for (const TrialRecord& a : study->attempts) {
      (a.state == TrialState::kPaused ? paused_then : interrupted_then).insert(a.number);
    }
    std::printf(
        "checkpoints: %zu trials went on from a checkpoint after an interruption, %zu after a pause at a rung "
        "(%zu earlier attempts)\n",
        interrupted_then.size(), paused_then.size(), study->attempts.size());
  }
  if (!study->stop_reason.empty()) std::printf("stopped early: %s\n", ForTerminal(study->stop_reason).c_str());
  PrintFailures(*study, args.study);
  PrintSamplerTime(*study);
  PrintIdleGaps(*study);
  PrintCost(*study);
  if (c.study.multi_objective()) {
    PrintFront(*study);
    return kExitOk;
  }
  const TrialRecord* best = nullptr;
  for (const TrialRecord& r : study->trials) {
    if (r.state != TrialState::kComplete || !r.value || r.infeasible()) continue;
    const bool better =
        !best || (c.study.direction == Direction::kMaximize ? *r.value > *best->value : *r.value < *best->value);
    if (better) best = &r;
  }
  if (!best) {
    std::printf("no trial completed yet\n");
    return kExitOk;
  }
  std::printf("\nbest: trial %lld, %s = %.6g (%.1fs on %s%s)\n", static_cast<long long>(best->number),
              c.study.metric.c_str(), *best->value, best->duration(), best->host.c_str(),
              best->gpu.empty() ? "" : (", gpu " + best->gpu).c_str());
  for (const ParamSpec& spec : c.space.params()) {
    const auto it = best->params.find(spec.name);
    if (it != best->params.end()) std::printf("  %-14s %s\n", spec.name.c_str(), FormatValue(it->second).c_str());
  }
  PrintAncestry(*study, *best);
  PrintTop(*study, args.top);
  return kExitOk;
}

}  // namespace cleansweep
