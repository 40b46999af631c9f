#include "pruners/pbt_pruner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "util/random.hpp"

namespace cleansweep {

std::optional<std::string> PbtPruner::ShouldPrune(std::int64_t /*number*/, std::int64_t step,
                                                  const Curves& /*curves*/) {
  if (step <= 0 || step % options_.interval != 0) return std::nullopt;
  return "paused at step " + std::to_string(step) + " (population-based training looks at its members every " +
         std::to_string(options_.interval) + " steps)";
}

std::optional<Promotion> PbtPruner::Promote(const Curves& curves) const {
  // The paused member furthest behind goes first, so that the population moves on together.
  std::optional<std::pair<std::int64_t, std::int64_t>> next;  // last step, number
  for (const auto& [n, curve] : curves) {
    if (curve.state != TrialState::kPaused || curve.values.empty()) continue;
    const std::pair<std::int64_t, std::int64_t> key{curve.values.rbegin()->first, n};
    if (!next || key < *next) next = key;
  }
  if (!next) return std::nullopt;
  const auto [step, number] = *next;
  const TrialCurve& mine = curves.at(number);
  Promotion goes_on{number, 0, step, "", -1, -1};
  // The population: trials with a value that are still members (running, paused). One that
  // completed has left it: its last checkpoint is its end, nothing to train on from.
  std::vector<std::pair<double, std::int64_t>> ranked;  // latest value, trial; best first below
  for (const auto& [n, curve] : curves) {
    const bool member = curve.state == TrialState::kRunning || curve.state == TrialState::kPaused;
    if (member && !curve.values.empty()) ranked.push_back({curve.values.rbegin()->second, n});
  }
  const bool maximize = direction_ == Direction::kMaximize;
  std::sort(ranked.begin(), ranked.end(), [&](const auto& a, const auto& b) {
    return a.first != b.first ? (maximize ? a.first > b.first : a.first < b.first) : a.second < b.second;
  });
  const size_t n = ranked.size();
  const size_t q = std::min(static_cast<size_t>(std::ceil(static_cast<double>(n) * options_.quantile)), n / 2);
  const double value = mine.values.rbegin()->second;
  char text[240];
  const auto bottom_at = std::find_if(ranked.end() - static_cast<std::ptrdiff_t>(q), ranked.end(),
                                      [&](const auto& r) { return r.second == number; });
  if (q == 0 || bottom_at == ranked.end()) {
    std::snprintf(text, sizeof text, "goes on at step %lld: value %.6g is not in the bottom %zu of %zu members",
                  static_cast<long long>(step), value, q, n);
    goes_on.reason = text;
    return goes_on;
  }
  std::vector<std::int64_t> donors;  // top-quantile members with a checkpoint to start from
  for (size_t i = 0; i < q; ++i) {
    if (curves.at(ranked[i].second).checkpoint_step >= 0) donors.push_back(ranked[i].second);
  }
  if (donors.empty()) {
    std::snprintf(text, sizeof text,
                  "goes on at step %lld: value %.6g is in the bottom %zu of %zu members, but no member of the top "
                  "%zu has a checkpoint yet",
                  static_cast<long long>(step), value, q, n, q);
    goes_on.reason = text;
    return goes_on;
  }
  // In unsigned arithmetic, which wraps: a step near INT64_MAX must not overflow a signed sum.
  SplitMix64 rng = StreamFor(options_.seed ^ 0x706274ULL,
                             static_cast<std::uint64_t>(number) * 1'000'003ULL + static_cast<std::uint64_t>(step));
  const std::int64_t parent = donors[rng.Below(donors.size())];
  const TrialCurve& donor = curves.at(parent);
  std::snprintf(text, sizeof text,
                "replaced at step %lld: value %.6g is in the bottom %zu of %zu members; trial %lld (value %.6g) is "
                "in the top %zu, and a new trial goes on from its checkpoint at step %lld",
                static_cast<long long>(step), value, q, n, static_cast<long long>(parent),
                donor.values.rbegin()->second, q, static_cast<long long>(donor.checkpoint_step));
  return Promotion{number, 0, step, text, parent, donor.checkpoint_step};
}

}  // namespace cleansweep
