#pragma once

#include "pruners/pruner.hpp"

namespace cleansweep {

// The schedule of population-based training (Jaderberg et al. 2017), asynchronous, with every
// member's every interval in a fresh process (sampler.kind: pbt, docs/samplers.md). A member
// pauses each time it reports a step that is a multiple of `interval` (it exits after that
// step's checkpoint). When a worker is free, the paused member furthest behind is looked at,
// against the population as it stands: every trial with a value that runs or waits paused (a
// completed one has left), ranked by its latest value. In the bottom `quantile` (ceil(n * quantile), at most
// half) it is replaced: it ends, and a new trial starts from the latest checkpoint of a member of
// the top quantile, drawn at random, with parameters the sampler derives from that member's.
// Otherwise it goes on from its own checkpoint. No generation barrier: a member never waits for
// the others to reach its step.
class PbtPruner : public Pruner {
 public:
  PbtPruner(SamplerOptions options, Direction direction) : options_(std::move(options)), direction_(direction) {}
  std::optional<std::string> ShouldPrune(std::int64_t number, std::int64_t step, const Curves& curves) override;
  bool Pauses() const override { return true; }
  bool PromotesFirst() const override { return false; }
  std::optional<Promotion> Promote(const Curves& curves) const override;

 private:
  SamplerOptions options_;
  Direction direction_;
};

}  // namespace cleansweep
