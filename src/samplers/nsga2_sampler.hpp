// NSGA-II (Deb et al. 2002) for one or several metrics, asynchronous: there are no generations to
// wait for. The parent population is the best `population_size` COMPLETE trials so far, by
// non-dominated rank and then crowding distance, re-selected whenever trials have finished (an
// elitist steady state); every Ask breeds one child from it at once, so a hundred workers never
// wait for a generation's stragglers.
#pragma once

#include <optional>
#include <vector>

#include "samplers/numeric_domain.hpp"
#include "samplers/pareto.hpp"
#include "samplers/sampler.hpp"
#include "util/random.hpp"

namespace cleansweep {

class Nsga2Sampler : public Sampler {
 public:
  Nsga2Sampler(SearchSpace space, SamplerOptions options, std::vector<Metric> metrics);

  // Random (as the random sampler draws) until population_size trials have completed; then a
  // child of two parents chosen by binary tournament: each parameter by crossover (simulated
  // binary for numbers, in their log/step-aware unit interval; uniform for categories) with
  // probability crossover_prob, then mutated with probability mutation_prob (polynomial for
  // numbers, a fresh draw for categories). A parameter that only one parent has (conditional)
  // comes from that parent; one neither has is drawn at random. Trial n's draws depend only on
  // (seed, n) and the trials finished so far.
  std::optional<ParamSet> Ask(std::int64_t number, const TrialHistory& history) override;

  // The current parents, for tests: their count, and their numbers in `history` (the one asked with).
  size_t population_size() const { return population_.size(); }
  std::vector<std::int64_t> Parents(const TrialHistory& history) const {
    std::vector<std::int64_t> out;
    for (const Member& m : population_) out.push_back(history.finished[m.trial].number);
    return out;
  }

 private:
  struct Member {
    Point point;           // its values, all minimised
    double violation = 0;  // > 0: outside study.constraints
    size_t trial = 0;      // its index in history.finished (which only grows)
    int rank = 0;
    double crowding = 0;
  };

  // Takes in the trials that completed since the last call and re-selects the parents.
  void Update(const TrialHistory& history);
  const Member& Tournament(SplitMix64& rng) const;
  ParamSet Child(const TrialHistory& history, SplitMix64& rng) const;
  // One child of two parents; `forced`: the index of a parameter mutated whatever mutation_prob
  // says. `rng` is a copy, so two calls with the same stream differ only there.
  ParamSet Breed(const ParamSet& first, const ParamSet& second, bool crossover, SplitMix64 rng,
                 std::optional<size_t> forced) const;

  SearchSpace space_;
  SamplerOptions options_;
  std::vector<Metric> metrics_;
  std::vector<NumericDomain> domains_;  // per parameter of space_, in its order
  double mutation_prob_ = 0;
  size_t seen_ = 0;    // history.finished entries taken in
  size_t scored_ = 0;  // COMPLETE trials among them
  std::vector<Member> population_;
};

}  // namespace cleansweep
