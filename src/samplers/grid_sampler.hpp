#pragma once

#include <set>
#include <vector>

#include "samplers/sampler.hpp"

namespace cleansweep {

// Every combination of the parameters' grid values, in an order shuffled by the seed so that a
// sweep cut short by n_trials or a time budget still covers the space evenly. Inactive
// conditional parameters do not multiply the grid. Points already run (in the history) are skipped.
// Shard K of N keeps the points that the unsharded sweep would hand out at the positions K, K+N,
// ... of its trial list, which starts with the `enqueued` configurations; grid points equal to an
// enqueued configuration are dropped up front, as the unsharded sweep would skip them.
class GridSampler : public Sampler {
 public:
  // InvalidInput when a parameter has no finite set of grid values or the grid is too large.
  static Result<std::unique_ptr<GridSampler>> Create(const SearchSpace& space, const std::string& source,
                                                     std::uint64_t seed, const Shard& shard = {},
                                                     const std::vector<ParamSet>& enqueued = {});

  std::optional<ParamSet> Ask(std::int64_t number, const TrialHistory& history) override;
  ParamSet ProposalFor(std::int64_t, const TrialHistory&) override { return {}; }
  // A grid is declared: a parameter it lacks has no grid points (the trial fails, saying so).
  Result<ParamValue> SuggestTrialDefined(std::int64_t number, const ParamSpec& spec, const ParamSet& asked,
                                         const TrialHistory& history) override;
  // The size of the whole (unsharded) grid.
  std::optional<std::int64_t> Capacity() const override { return capacity_; }

  // The values the grid uses for `spec`, or InvalidInput naming what is missing.
  static Result<std::vector<ParamValue>> GridValues(const ParamSpec& spec);

 private:
  std::vector<ParamSet> points_;  // this shard's points, in the order they are handed out
  std::int64_t capacity_ = 0;
  size_t next_ = 0;
  std::set<std::string> used_;  // canonical JSON of points handed out or found in the history
  size_t history_seen_ = 0;     // finished trials already folded into used_
};

}  // namespace cleansweep
