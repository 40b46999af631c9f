#include "coordinator/gang_outcome.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace cleansweep {
namespace {

// Sums the known values; NaN when none is known.
void AddKnown(double value, double* sum) {
  if (std::isnan(value)) return;
  *sum = std::isnan(*sum) ? value : *sum + value;
}

void MaxKnown(double value, double* most) {
  if (std::isnan(value)) return;
  *most = std::isnan(*most) ? value : std::max(*most, value);
}

bool CausedByUs(TrialState state) {
  return state == TrialState::kComplete || state == TrialState::kInterrupted || state == TrialState::kPruned ||
         state == TrialState::kPaused;
}

}  // namespace

std::string FormatRanks(const std::vector<int>& ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!text.empty()) text += ",";
    text += std::to_string(ranks[i]);
    if (j > i) text += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return text;
}

TrialRecord MergeGang(const std::vector<int>& ranks, const std::map<int, TrialRecord>& ended) {
  const TrialRecord& lead = ended.at(ranks.front());
  TrialRecord whole = lead;
  whole.gpus = static_cast<int>(ranks.size());
  whole.workers = FormatRanks(ranks);
  whole.gpu.clear();
  whole.peak_rss_kb = whole.peak_rss_max_kb = 0;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  whole.gpu_mem_peak_mb = whole.gpu_mem_peak_max_mb = whole.cpu_seconds = whole.gpu_seconds = whole.energy_j = nan;
  const TrialRecord* failed = nullptr;
  int failed_rank = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const TrialRecord& r = ended.at(ranks[i]);
    if (!r.gpu.empty()) whole.gpu += (whole.gpu.empty() ? "" : ",") + r.gpu;
    whole.start_time = std::min(whole.start_time, r.start_time);
    whole.end_time = std::max(whole.end_time, r.end_time);
    whole.peak_rss_kb += r.peak_rss_kb;
    whole.peak_rss_max_kb = std::max(whole.peak_rss_max_kb, r.peak_rss_max_kb);
    AddKnown(r.gpu_mem_peak_mb, &whole.gpu_mem_peak_mb);
    MaxKnown(r.gpu_mem_peak_max_mb, &whole.gpu_mem_peak_max_mb);
    AddKnown(r.cpu_seconds, &whole.cpu_seconds);
    AddKnown(r.gpu_seconds, &whole.gpu_seconds);
    AddKnown(r.energy_j, &whole.energy_j);
    // What failed after rank 0 completed (a process's teardown) does not undo the trial.
    const bool counts = !CausedByUs(r.state) && !(lead.state == TrialState::kComplete && r.end_time > lead.end_time);
    if (counts && (!failed || r.end_time < failed->end_time)) {
      failed = &r;
      failed_rank = static_cast<int>(i);
    }
  }
  if (failed) {
    whole.state = failed->state;
    whole.exit_code = failed->exit_code;
    whole.signal = failed->signal;
    whole.reason = "rank " + std::to_string(failed_rank) + " of " + std::to_string(ranks.size()) + " (worker " +
                   std::to_string(failed->worker) + " on " + failed->host + ") failed first: " + failed->reason;
    whole.output_tail = failed->output_tail;
    if (whole.state != TrialState::kComplete) whole.values.clear();
  }
  return whole;
}

}  // namespace cleansweep
