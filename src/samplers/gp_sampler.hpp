// Bayesian optimisation with a Gaussian process (docs/samplers.md, "gp"): after n_startup_trials
// Sobol points, each ask fits a Matern-5/2 ARD model to the standardised losses and proposes the
// point of highest log expected improvement, times the probability of meeting each of
// study.constraints (one model per bound). For a cluster: trials still running, and the earlier
// proposals of a batch, join the model as fantasies (its posterior mean, or the average loss where
// the mean promises better), so free workers get different points; failed trials (OOM, crash,
// timeout) count as the worst loss seen, so the search moves away from what kills trials; pruned
// and paused trials count by their last value.
//
// Cost: the model grows by one O(n^2) Cholesky extension per trial; the kernel parameters are
// refitted on a schedule (every trial up to 50, then whenever the history has grown by a tenth),
// on at most kFitPoints trials. Past sampler.max_points trials the model keeps the best half of
// them and the most recent, so an ask's cost stops growing (docs/samplers.md).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "samplers/gaussian_process.hpp"
#include "samplers/numeric_domain.hpp"
#include "samplers/sampler.hpp"
#include "samplers/sobol_sampler.hpp"

namespace cleansweep {

class GpSampler : public Sampler {
 public:
  // Trials the kernel parameters are fitted on, at most (the best half, then the most recent).
  static constexpr Eigen::Index kFitPoints = 200;
  // Running trials that join the model as fantasies, at most: the most recently started. Each costs
  // an O(n^2) row of the factor per ask; with a thousand workers all of them would cost seconds
  // per ask, while the batch's own proposals (always fantasies) keep a batch spread out.
  static constexpr int kMaxRunningFantasies = 128;

  GpSampler(SearchSpace space, SamplerOptions options, StudyOptions study);
  ~GpSampler() override;

  std::optional<ParamSet> Ask(std::int64_t number, const TrialHistory& history) override;
  bool AsksInBatches() const override { return true; }
  std::vector<ParamSet> AskBatch(const std::vector<std::int64_t>& numbers, const TrialHistory& history) override;
  // Define-by-run (docs/samplers.md): the parameters trials define that each of the last
  // kSharedWindow scored trials had, with one distribution, are modelled together by a GP of
  // their own, fitted on the trials that had them all (one joint proposal per trial, handed out
  // as it asks); any other parameter a trial defines is drawn by independent TPE.
  Result<ParamValue> SuggestTrialDefined(std::int64_t number, const ParamSpec& spec, const ParamSet& asked,
                                         const TrialHistory& history) override;
  static constexpr size_t kSharedWindow = 10;

  // The model's inputs: a trial's parameters on the unit cube (nullopt: a value outside this
  // space, from an older one). Exposed for tests.
  std::optional<Eigen::VectorXd> Encode(const ParamSet& params) const;
  ParamSet Decode(const Eigen::VectorXd& x) const;
  int dimensions() const { return static_cast<int>(features_.size()); }
  // The objective model after the last ask (its kernel, its size), for tests and sampler_bench.
  const GaussianProcess* objective_model() const;
  // The acquisition of the last ask's models at each column of `points` (inputs as Encode makes
  // them): log EI plus log P(feasible) of every bound of study.constraints.
  Eigen::VectorXd Acquisition(const Eigen::MatrixXd& points) const;

 private:
  struct Feature {
    const ParamSpec* spec = nullptr;
    bool indicator = false;    // 1 where a conditional numeric parameter is active, 0 where not
    bool categorical = false;  // a choice index (Hamming distance), or an indicator
    NumericDomain domain;
  };
  struct Model;
  struct Observations;

  Observations Observe(const TrialHistory& history) const;
  void UpdateModels(const Observations& observed);
  // x joins every model as a fantasy; with `solve` false the targets may wait for SolveFantasies().
  void AddFantasy(const Eigen::VectorXd& x, bool solve);
  void SolveFantasies();
  void DropFantasies();
  std::vector<Model*> AllModels();
  ParamSet Propose(std::int64_t number);
  double AcquisitionWithGradient(const Eigen::VectorXd& x, Eigen::VectorXd* gradient) const;
  // The `k` columns of `points` with the highest acquisition, best first, with it: exactly, but
  // the exact variance is only computed for the candidates whose bound (each model's variance
  // bound, GaussianProcess::Screen) could beat the k-th best found so far.
  std::vector<std::pair<double, Eigen::Index>> Best(const Eigen::MatrixXd& points, size_t k) const;
  Eigen::VectorXd Snap(const Eigen::VectorXd& x) const;  // onto ints, steps and the activity it implies

  SearchSpace space_;
  SamplerOptions options_;
  StudyOptions study_;
  std::vector<Feature> features_;
  std::vector<bool> categorical_;
  std::unique_ptr<SobolSampler> sobol_;  // start-up trials and candidate sweeps; null past 21 dimensions
  std::unique_ptr<Model> objective_;
  std::vector<std::unique_ptr<Model>> constraints_;  // one per bound of study.constraints
  double best_ = 0;  // the best feasible standardised loss; +inf when none is feasible yet
  bool any_feasible_ = false;
  // Define-by-run: the GP over the shared trial-defined parameters, what they are (their
  // distributions, joined), and its proposal for each running trial that asked for one.
  std::unique_ptr<GpSampler> shared_;
  std::string shared_key_;
  std::map<std::int64_t, ParamSet> shared_proposals_;
};

}  // namespace cleansweep
