#include "pruners/successive_halving_pruner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace cleansweep {
namespace {

// The value `curve` holds at the first step at or past `rung_step`, if it got there.
std::optional<double> RungValue(const TrialCurve& curve, std::int64_t rung_step) {
  const auto it = curve.values.lower_bound(rung_step);
  if (it == curve.values.end()) return std::nullopt;
  return it->second;
}

}  // namespace

SuccessiveHalvingPruner::SuccessiveHalvingPruner(PrunerOptions options, Direction direction,
                                                 int min_early_stopping_rate,
                                                 std::function<bool(std::int64_t, std::int64_t)> peers)
    : options_(std::move(options)),
      direction_(direction),
      min_early_stopping_rate_(min_early_stopping_rate),
      peers_(std::move(peers)) {}

std::int64_t SuccessiveHalvingPruner::RungStep(int rung) const {
  return static_cast<std::int64_t>(
      std::llround(static_cast<double>(options_.min_resource) *
                   std::pow(static_cast<double>(options_.reduction_factor), min_early_stopping_rate_ + rung)));
}

std::optional<std::string> SuccessiveHalvingPruner::ShouldPrune(std::int64_t number, std::int64_t step,
                                                                const Curves& curves) {
  const TrialCurve& mine = curves.at(number);
  const bool maximize = direction_ == Direction::kMaximize;
  // Every rung this report reaches for the first time is decided now.
  for (int rung = 0;; ++rung) {
    const std::int64_t rung_step = RungStep(rung);
    if (rung_step > step) return std::nullopt;
    if (options_.max_resource > 0 && rung_step >= options_.max_resource) return std::nullopt;
    const auto first_past = mine.values.lower_bound(rung_step);
    if (first_past == mine.values.end() || first_past->first != step) continue;  // decided earlier
    const double value = first_past->second;
    std::vector<double> competing;
    for (const auto& [n, curve] : curves) {
      if (peers_ && !peers_(number, n)) continue;
      if (const std::optional<double> v = RungValue(curve, rung_step)) competing.push_back(*v);
    }
    const size_t keep = std::max<size_t>(1, competing.size() / static_cast<size_t>(options_.reduction_factor));
    if (maximize) {
      std::sort(competing.begin(), competing.end(), std::greater<>());
    } else {
      std::sort(competing.begin(), competing.end());
    }
    const double threshold = competing[keep - 1];
    if (maximize ? value >= threshold : value <= threshold) continue;
    char reason[200];
    std::snprintf(reason, sizeof reason,
                  "pruned at rung %d (step %lld): value %.6g is not in the best %zu of %zu trials at that rung", rung,
                  static_cast<long long>(rung_step), value, keep, competing.size());
    return std::string(reason);
  }
}

}  // namespace cleansweep
