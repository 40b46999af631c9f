#include "pruners/hyperband_pruner.hpp"

#include <cmath>
#include <map>

#include "util/random.hpp"

namespace cleansweep {

HyperbandPruner::HyperbandPruner(PrunerOptions options, Direction direction) : resume_(options.resume) {
  const double eta = static_cast<double>(options.reduction_factor);
  const int s_max = static_cast<int>(std::floor(
      std::log(static_cast<double>(options.max_resource) / static_cast<double>(options.min_resource)) / std::log(eta) +
      1e-9));
  std::vector<double> weights;
  for (int b = 0; b <= s_max; ++b) {
    const int s = s_max - b;  // Hyperband's s: bracket b starts ceil((s_max+1)/(s+1) * eta^s) configurations
    weights.push_back(std::ceil(static_cast<double>(s_max + 1) / (s + 1) * std::pow(eta, s)));
  }
  double total = 0;
  for (double w : weights) total += w;
  double acc = 0;
  for (double w : weights) cumulative_.push_back(acc += w / total);
  for (int b = 0; b <= s_max; ++b) {
    brackets_.push_back(std::make_unique<SuccessiveHalvingPruner>(
        options, direction, b, [this](std::int64_t a, std::int64_t c) { return BracketOf(a) == BracketOf(c); }));
  }
}

int HyperbandPruner::BracketOf(std::int64_t number) const {
  SplitMix64 rng = StreamFor(0x6879706572ULL, static_cast<std::uint64_t>(number));
  const double u = rng.Uniform();
  for (size_t b = 0; b < cumulative_.size(); ++b) {
    if (u < cumulative_[b]) return static_cast<int>(b);
  }
  return static_cast<int>(cumulative_.size()) - 1;
}

std::optional<std::string> HyperbandPruner::ShouldPrune(std::int64_t number, std::int64_t step, const Curves& curves) {
  const int b = BracketOf(number);
  std::optional<std::string> reason = brackets_[static_cast<size_t>(b)]->ShouldPrune(number, step, curves);
  if (reason) *reason = "bracket " + std::to_string(b) + ": " + *reason;
  return reason;
}

std::optional<Promotion> HyperbandPruner::Promote(const Curves& curves) const {
  std::map<int, std::vector<std::int64_t>> paused;  // by bracket
  for (const auto& [n, curve] : curves) {
    if (curve.state == TrialState::kPaused) paused[BracketOf(n)].push_back(n);
  }
  std::optional<Promotion> chosen;
  for (const auto& [b, members] : paused) {
    std::optional<Promotion> p = brackets_[static_cast<size_t>(b)]->PromoteAmong(curves, members);
    if (!p || (chosen && chosen->rung >= p->rung)) continue;
    p->reason = "bracket " + std::to_string(b) + ": " + p->reason;
    chosen = std::move(p);
  }
  return chosen;
}

}  // namespace cleansweep
