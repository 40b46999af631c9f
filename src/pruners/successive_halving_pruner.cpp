#include "pruners/successive_halving_pruner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
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
  // In integers, saturating: pow() in doubles past 2^63 made llround() return INT64_MIN, a rung
  // below every step, and the rung loops never ended (issue 40).
  std::int64_t step = std::max<std::int64_t>(options_.min_resource, 1);
  const std::int64_t factor = std::max(options_.reduction_factor, 2);
  for (int i = 0; i < min_early_stopping_rate_ + rung; ++i) {
    if (step > kNoRung / factor) return kNoRung;
    step *= factor;
  }
  return step;
}

bool SuccessiveHalvingPruner::Decides(std::int64_t rung_step) const {
  return rung_step != kNoRung && (options_.max_resource <= 0 || rung_step < options_.max_resource);
}

int SuccessiveHalvingPruner::HighestRung(const TrialCurve& curve) const {
  if (curve.values.empty()) return -1;
  const std::int64_t last = curve.values.rbegin()->first;
  int highest = -1;
  for (int rung = 0; RungStep(rung) <= last && Decides(RungStep(rung)); ++rung) highest = rung;
  return highest;
}

std::vector<double> SuccessiveHalvingPruner::Competing(std::int64_t number, std::int64_t rung_step,
                                                       const Curves& curves) const {
  std::vector<double> competing;
  for (const auto& [n, curve] : curves) {
    if (peers_ && !peers_(number, n)) continue;
    if (const std::optional<double> v = RungValue(curve, rung_step)) competing.push_back(*v);
  }
  if (competing.empty()) return competing;
  const auto worst_kept = competing.begin() + static_cast<std::ptrdiff_t>(Keep(competing) - 1);
  if (direction_ == Direction::kMaximize) {
    std::nth_element(competing.begin(), worst_kept, competing.end(), std::greater<>());
  } else {
    std::nth_element(competing.begin(), worst_kept, competing.end());
  }
  return competing;
}

size_t SuccessiveHalvingPruner::Keep(const std::vector<double>& competing) const {
  return std::max<size_t>(1, competing.size() / static_cast<size_t>(options_.reduction_factor));
}

std::optional<std::string> SuccessiveHalvingPruner::ShouldPrune(std::int64_t number, std::int64_t step,
                                                                const Curves& curves) {
  const TrialCurve& mine = curves.at(number);
  const bool maximize = direction_ == Direction::kMaximize;
  // The rungs this report reaches for the first time: each is decided now, or (resume) the highest.
  std::vector<int> reached;
  for (int rung = 0; RungStep(rung) <= step && Decides(RungStep(rung)); ++rung) {
    const auto first_past = mine.values.lower_bound(RungStep(rung));
    if (first_past != mine.values.end() && first_past->first == step) reached.push_back(rung);
  }
  if (options_.resume && reached.size() > 1) reached.erase(reached.begin(), reached.end() - 1);
  for (const int rung : reached) {
    const std::int64_t rung_step = RungStep(rung);
    const double value = mine.values.lower_bound(rung_step)->second;
    const std::vector<double> competing = Competing(number, rung_step, curves);
    const size_t keep = Keep(competing);
    const double threshold = competing[keep - 1];
    if (maximize ? value >= threshold : value <= threshold) continue;
    char reason[200];
    std::snprintf(reason, sizeof reason,
                  "%s at rung %d (step %lld): value %.6g is not %sin the best %zu of %zu trials at that rung",
                  options_.resume ? "paused" : "pruned", rung, static_cast<long long>(rung_step), value,
                  options_.resume ? "(yet) " : "", keep, competing.size());
    return std::string(reason);
  }
  return std::nullopt;
}

std::optional<Promotion> SuccessiveHalvingPruner::Promote(const Curves& curves) const {
  std::vector<std::int64_t> paused;
  for (const auto& [n, curve] : curves) {
    if (curve.state == TrialState::kPaused) paused.push_back(n);
  }
  return PromoteAmong(curves, paused);
}

std::optional<Promotion> SuccessiveHalvingPruner::PromoteAmong(const Curves& curves,
                                                               const std::vector<std::int64_t>& paused) const {
  if (paused.empty()) return std::nullopt;
  std::map<int, std::vector<std::int64_t>, std::greater<>> by_rung;  // the highest rung first
  for (const std::int64_t n : paused) {
    if (const int rung = HighestRung(curves.at(n)); rung >= 0) by_rung[rung].push_back(n);
  }
  const bool maximize = direction_ == Direction::kMaximize;
  for (const auto& [rung, members] : by_rung) {
    const std::int64_t rung_step = RungStep(rung);
    const std::vector<double> competing = Competing(members.front(), rung_step, curves);
    const size_t keep = Keep(competing);
    const double threshold = competing[keep - 1];
    std::optional<std::pair<std::int64_t, double>> best;
    for (const std::int64_t n : members) {
      const double value = *RungValue(curves.at(n), rung_step);
      const bool within = maximize ? value >= threshold : value <= threshold;
      if (within && (!best || (maximize ? value > best->second : value < best->second))) best = {n, value};
    }
    if (!best) continue;
    char reason[200];
    std::snprintf(reason, sizeof reason,
                  "promoted at rung %d (step %lld): value %.6g is now in the best %zu of %zu trials at that rung", rung,
                  static_cast<long long>(rung_step), best->second, keep, competing.size());
    return Promotion{best->first, rung, rung_step, reason};
  }
  return std::nullopt;
}

}  // namespace cleansweep
