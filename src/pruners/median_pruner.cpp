#include "pruners/median_pruner.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace cleansweep {

std::optional<std::string> MedianPruner::ShouldPrune(std::int64_t number, std::int64_t step, const Curves& curves) {
  if (step < options_.n_warmup_steps || (step - options_.n_warmup_steps) % options_.interval_steps != 0) {
    return std::nullopt;
  }
  std::vector<double> at_step;
  std::int64_t completed = 0;
  for (const auto& [n, curve] : curves) {
    if (n == number || curve.state != TrialState::kComplete) continue;
    ++completed;
    const auto it = curve.values.find(step);
    if (it != curve.values.end()) at_step.push_back(it->second);
  }
  if (completed < options_.n_startup_trials || at_step.empty() ||
      static_cast<std::int64_t>(at_step.size()) < options_.n_min_trials) {
    return std::nullopt;
  }
  std::sort(at_step.begin(), at_step.end());
  const size_t m = at_step.size();
  // Halved before adding: the mean of two values near +-DBL_MAX must not overflow to infinity.
  const double median = m % 2 ? at_step[m / 2] : 0.5 * at_step[m / 2 - 1] + 0.5 * at_step[m / 2];
  const bool maximize = direction_ == Direction::kMaximize;
  const auto& mine = curves.at(number).values;
  double best = mine.begin()->second;  // it holds `step`'s value at least
  for (auto it = mine.begin(); it != mine.end() && it->first <= step; ++it) {
    best = maximize ? std::max(best, it->second) : std::min(best, it->second);
  }
  if (maximize ? best >= median : best <= median) return std::nullopt;
  char reason[160];
  std::snprintf(reason, sizeof reason,
                "pruned at step %lld: best value %.6g is worse than the median %.6g of %zu completed trials",
                static_cast<long long>(step), best, median, m);
  return std::string(reason);
}

}  // namespace cleansweep
