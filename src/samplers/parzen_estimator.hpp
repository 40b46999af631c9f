// A Parzen (kernel density) estimator over one or more parameters: a weighted mixture with one
// component per observation plus a broad prior component. Numeric dimensions use Gaussians
// truncated to the parameter's domain (exact bin masses for stepped ones); categorical dimensions
// use a smoothed one-hot distribution. TpeSampler builds one for the good trials and one for the
// rest. Pure; not thread-safe only in that Sample() takes the caller's generator.
#pragma once

#include <vector>

#include "samplers/numeric_domain.hpp"
#include "util/random.hpp"

namespace cleansweep {

struct EstimatorDim {
  bool categorical = false;
  int n_choices = 0;     // categorical
  NumericDomain domain;  // numeric
};

class ParzenEstimator {
 public:
  // `rows[i][d]`: observation i in dimension d (a transformed number, or a choice index).
  // `weights[i]`: its weight (> 0). `prior_weight`: the weight of the broad prior component.
  // In each numeric dimension a kernel is as wide as the larger gap to its neighbours, clipped to
  // [range / min(100, components), range] (Optuna's "magic clip"), also when several dimensions
  // are estimated jointly (Optuna uses Scott's rule there; it did worse in bench/).
  ParzenEstimator(std::vector<EstimatorDim> dims, const std::vector<std::vector<double>>& rows,
                  const std::vector<double>& weights, double prior_weight);

  // Adds an observation: the density is then the one an estimator built with it as the last row
  // has (the same kernels, widths and weights, up to the order of exactly equal values), at the
  // cost of updating its neighbours instead of refitting. TPE adds each proposal of a batch this
  // way. (Sample() numbers the components differently: draws are not the same.)
  void Add(const std::vector<double>& row, double weight);

  // One draw: a value per dimension.
  std::vector<double> Sample(SplitMix64& rng) const;
  // log density (numeric) or log mass (stepped, categorical) of a point.
  double LogPdf(const std::vector<double>& x) const;

 private:
  double NumericLogKernel(size_t d, size_t c, double x) const;
  void FitNumeric(size_t d);      // every kernel's width in dimension d, from mu_[d]
  void FitCategorical(size_t d);  // every component's choice masses in dimension d, from choice_[d]
  void SetWidth(size_t d, size_t c, double sigma);
  void FitWidthAt(size_t d, size_t r);  // the width of the kernel at rank r of order_[d], from its neighbours
  double MinSigma(size_t d) const;      // the floor on widths in dimension d, for the current count
  void Normalise();                     // weights_ and log_weights_ from raw_weights_

  std::vector<EstimatorDim> dims_;
  size_t components_ = 0;  // observations + 1 (the prior)
  size_t prior_ = 0;       // the prior's component: after the rows the estimator was built with
  double prior_weight_ = 1;
  std::vector<double> raw_weights_;  // as given
  std::vector<double> weights_;      // normalised
  std::vector<double> log_weights_;
  std::vector<double> min_sigma_;           // per numeric dimension, for the current count
  std::vector<std::vector<size_t>> order_;  // [dim]: components by mu, ascending
  std::vector<std::vector<int>> choice_;    // categorical: [dim][component], -1 for the prior
  std::vector<std::vector<double>> mu_;     // [dim][component]
  std::vector<std::vector<double>> sigma_;
  std::vector<std::vector<double>> inv_sigma_;  // 1 / sigma: the density loop multiplies
  std::vector<std::vector<double>> log_z_;      // log of the truncated mass of each Gaussian
  std::vector<std::vector<double>> log_norm_;   // -log(sigma sqrt(2 pi)) - log_z, per component
  std::vector<double> log_step_;                // log of each stepped dimension's bin width
  std::vector<std::vector<double>> log_p_;      // categorical: [dim][component * k + choice]
};

}  // namespace cleansweep
