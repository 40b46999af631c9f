// CMA-ES (Hansen's (mu/mu_w, lambda) evolution strategy with rank-one and rank-mu updates) over the
// always-active numeric parameters, each mapped to [0, 1] (log parameters in log space). The other
// parameters (categorical, conditional) come from the random sampler. Asynchronous: suggestions
// are drawn from the current distribution whenever a worker asks; the distribution moves once a
// generation's lambda results are in. Failed trials rank below every scored one. Trials it did not
// ask (another shard's, an earlier study's: negative numbers in the history) join the current
// generation as injected solutions (Hansen 2011), their steps clipped.
#pragma once

#include <map>
#include <vector>

#include "samplers/numeric_domain.hpp"
#include "samplers/sampler.hpp"
#include "util/random.hpp"

namespace cleansweep {

class CmaesSampler : public Sampler {
 public:
  CmaesSampler(SearchSpace space, SamplerOptions options, Direction direction);

  std::optional<ParamSet> Ask(std::int64_t number, const TrialHistory& history) override;

  int generation() const { return generation_; }
  const std::vector<double>& mean() const { return mean_; }
  std::int64_t injected() const { return injected_; }  // trials of other shards and studies learned from

 private:
  void Absorb(const TrialHistory& history);
  void Update();
  void Inject(const TrialRecord& r, double sign);
  void Decompose();
  std::vector<double> Draw();

  SearchSpace space_;
  SamplerOptions options_;
  Direction direction_;
  std::vector<const ParamSpec*> numeric_;  // the dimensions, in space order
  std::vector<NumericDomain> domains_;
  SplitMix64 rng_;

  // Strategy parameters (set once) and state.
  size_t n_ = 0;
  int lambda_ = 0, mu_ = 0;
  std::vector<double> weights_;
  double mu_eff_ = 0, c_sigma_ = 0, d_sigma_ = 0, c_c_ = 0, c_1_ = 0, c_mu_ = 0, chi_n_ = 0;
  std::vector<double> mean_, p_sigma_, p_c_;
  double sigma_ = 0;
  std::vector<std::vector<double>> c_, b_;  // covariance, its eigenvectors (columns)
  std::vector<double> d_;                   // square roots of its eigenvalues
  int generation_ = 0;

  struct Candidate {
    int generation;
    std::vector<double> x;  // in [0, 1]^n
  };
  std::map<std::int64_t, Candidate> asked_;                     // by trial number
  std::vector<std::pair<double, std::vector<double>>> scored_;  // this generation: (loss, x)
  size_t history_seen_ = 0;
  std::int64_t injected_ = 0;
};

}  // namespace cleansweep
